/**
 * Commands on a stream that many starts write at once (a budget's period, a limit's slots). In
 * one process they are handled one at a time already; processes sharing a store still collide,
 * and the kernel gives up after five tries with a retryable 409. A start must never end in a 409,
 * so these try again, spread out by a delay derived from the caller's key (no randomness: the same
 * run waits the same, different runs wait differently).
 */
import { Conflict } from '../../src/kernel/errors.js';

const MAX_ROUNDS = 20;

/** A small number from the key: where in the spread this caller waits. */
function spreadOf(key: string): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) >>> 0;
  return h % 13;
}

/** The wait before round `round` (1-based) of `key`: grows with the round, offset by the key. */
const backoffMs = (key: string, round: number) => round * 2 + ((spreadOf(key) + round * 5) % 13);

/** Runs `attempt` until it does not end in a retryable conflict (at most MAX_ROUNDS times). */
export async function contended<T>(key: string, attempt: () => Promise<T>): Promise<T> {
  for (let round = 1; ; round++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof Conflict && error.retryable) || round >= MAX_ROUNDS) throw error;
      await new Promise((resolve) => setTimeout(resolve, backoffMs(key, round)));
    }
  }
}
