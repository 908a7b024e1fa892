/**
 * Per-webhook sliding one-minute windows, counted once for every process of a store: each budget
 * is a document of the read store (`webhook_budgets`, not a read model) holding the times it was
 * spent within the last window, changed by compare-and-set on its version (one conditional update,
 * DocumentStore.update). Two processes spending the last use at once: one wins, the other reads
 * again and finds the budget used up. In one process a budget is spent by one request at a time,
 * so only processes race each other (a hundred requests racing in one process made a hundred
 * rounds). Keys are webhook uids that exist, so the documents stay few.
 *
 * Uses past a budget may be counted on the same document (`counted_<name>`, with a total and the
 * time of the last), by increments that commute, so no process loses another's; whoever takes the
 * counts takes each once.
 */
import { own } from '../../../src/own-keys.js';
import { setTimeout as delay } from 'node:timers/promises';
import { oneAtATime } from '../../../src/kernel/per-key-queue.js';
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
  /** Spends one use unless the budget is used up: null when spent, else the seconds to wait. */
  take(key: string, now: number): Promise<number | null>;
  /**
   * Spends one use when the budget has one (null); past it, counts the use under `counter` instead,
   * adding `amount` to that counter's total, and answers the seconds until the budget has room.
   */
  takeOrCount(key: string, now: number, counter: string, amount: number): Promise<number | null>;
  /** The uses counted under each of `counters` since they were last taken, now taken. */
  takeCounted(key: string, counters: readonly string[]): Promise<Counted[]>;
}

interface Counted {
  counter: string;
  count: number;
  /** The sum of their amounts. */
  total: number;
  /** When the last of them was counted (ms since the epoch). */
  last_ms: number;
}

/** `limit` uses of each key within any `windowMs`, counted in `docs` (see above). */
export function slidingWindow(docs: DocumentStore, kind: string, limit: number, windowMs = 60_000): RateLimiter {
  const budgets = docs.collection<BudgetDoc>(BUDGETS);
  const id = (key: string) => `${kind}:${key}`;
  const inTurn = oneAtATime();
  const recent = (doc: BudgetDoc | null, now: number) => (doc?.times ?? []).filter((t) => t > now - windowMs);
  const wait = (times: number[], now: number) =>
    times.length < limit ? null : Math.max(1, Math.ceil((times[times.length - limit]! + windowMs - now) / 1000));

  /** Spends one use unless it is used up, by compare-and-set; the seconds to wait, or null. */
  async function spend(key: string, now: number): Promise<number | null> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const doc = await budgets.get(id(key));
      const times = recent(doc, now);
      const used = wait(times, now);
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

  /** Counts a use past the budget: increments only, so counts from every process add up. */
  async function count(key: string, now: number, counter: string, amount: number): Promise<void> {
    const field = `counted_${counter}`;
    await docs.update(BUDGETS, id(key), {
      set: { [`${field}_last_ms`]: now },
      inc: { [field]: 1, [`${field}_total`]: amount },
    });
  }

  /**
   * Takes what was read of one counter, in one conditional update: a process that read the same
   * count and comes second finds less left and takes nothing (unless as many were counted since:
   * then it takes those, with the total it read).
   */
  async function takeCount(key: string, doc: BudgetDoc, counter: string): Promise<Counted | null> {
    const field = `counted_${counter}`;
    const n = Number(own(doc, field) ?? 0);
    if (n <= 0) return null;
    const total = Number(own(doc, `${field}_total`) ?? 0);
    const taken = await docs.update(BUDGETS, id(key), {
      when: { [field]: { $gte: n } },
      inc: { [field]: -n, [`${field}_total`]: -total },
    });
    return taken && { counter, count: n, total, last_ms: Number(doc[`${field}_last_ms`]) };
  }

  return {
    take: (key, now) => inTurn(key, () => spend(key, now)),
    takeOrCount: (key, now, counter, amount) =>
      inTurn(key, async () => {
        const wait = await spend(key, now);
        if (wait !== null) await count(key, now, counter, amount);
        return wait;
      }),
    async takeCounted(key, counters) {
      const doc = await budgets.get(id(key));
      if (!doc) return [];
      const taken = await Promise.all(counters.map((counter) => takeCount(key, doc, counter)));
      return taken.filter((c) => c !== null);
    },
  };
}
