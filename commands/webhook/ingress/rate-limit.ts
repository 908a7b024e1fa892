/**
 * Per-webhook sliding one-minute windows, counted once for every process of a store: each budget
 * is a document of the read store (`webhook_budgets`, not a read model) holding the times it was
 * spent within the last window, changed by compare-and-set on its version (one conditional update,
 * DocumentStore.update). Two processes spending the last use at once: one wins, the other reads
 * again and finds the budget used up. In one process a budget is spent by one request at a time,
 * so only processes race each other (a hundred requests racing in one process made a hundred
 * rounds). Keys are webhook uids that exist, so the documents stay few.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { oneAtATime } from '../../../src/kernel/one-at-a-time.js';
import type { DocumentStore } from '../../../src/readstore/port.js';

export const BUDGETS = 'webhook_budgets';

interface BudgetDoc {
  [field: string]: unknown;
  /** When the budget was spent (ms since the epoch), oldest first, within the last window. */
  times: number[];
  version: number;
}

/** Compare-and-set rounds before giving up (each lost round means another writer got through). */
const MAX_ROUNDS = 100;

export interface RateLimiter {
  /** Seconds to wait when the key has used its budget, else null. */
  exhausted(key: string, now: number): Promise<number | null>;
  /** Spends one use unless the budget is used up: null when spent, else the seconds to wait. */
  take(key: string, now: number): Promise<number | null>;
  /** Counts one more use, budget or not. */
  hit(key: string, now: number): Promise<void>;
}

/** `limit` uses of each key within any `windowMs`, counted in `docs` (see above). */
export function slidingWindow(docs: DocumentStore, kind: string, limit: number, windowMs = 60_000): RateLimiter {
  const budgets = docs.collection<BudgetDoc>(BUDGETS);
  const id = (key: string) => `${kind}:${key}`;
  const inTurn = oneAtATime();
  const recent = (doc: BudgetDoc | null, now: number) => (doc?.times ?? []).filter((t) => t > now - windowMs);
  const wait = (times: number[], now: number) =>
    times.length < limit ? null : Math.max(1, Math.ceil((times[times.length - limit]! + windowMs - now) / 1000));

  /** Spends one use (unless `bounded` and used up), by compare-and-set; the seconds to wait, or null. */
  async function spend(key: string, now: number, bounded: boolean): Promise<number | null> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const doc = await budgets.get(id(key));
      const times = recent(doc, now);
      const used = bounded ? wait(times, now) : null;
      if (used !== null) return used;
      const written = await docs.update(BUDGETS, id(key), {
        when: doc ? { version: doc.version } : { version: { $exists: false } },
        set: { times: [...times, now].slice(-limit) },
        inc: { version: 1 },
        upsert: !doc,
      });
      if (written) return null;
      // Another writer got through first; after a few rounds, let the crowd thin out.
      if (round >= 3) await delay(Math.random() * 5 * round);
    }
    throw new Error(`budget ${id(key)} stayed contended over ${MAX_ROUNDS} rounds`);
  }

  return {
    async exhausted(key, now) {
      return wait(recent(await budgets.get(id(key)), now), now);
    },
    take: (key, now) => inTurn(key, () => spend(key, now, true)),
    async hit(key, now) {
      await inTurn(key, () => spend(key, now, false));
    },
  };
}
