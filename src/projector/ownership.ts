/**
 * One owner at a time for work that must run in one process of a store: the projector, each
 * reactor, a feature's background sweep. Each piece of work has a lease, a document of the read
 * store's `ownership` collection, taken and renewed by one conditional update each
 * (`DocumentStore.update`), on SQLite and MongoDB alike.
 *
 * - The lease carries a fencing token that grows with every takeover; the owner's commits are
 *   fenced by it (`Fence`), so a process that lost its lease cannot write once another took it.
 * - Expiry is judged by each process's own monotonic clock, never by comparing wall clocks: a
 *   process takes a lease over only after watching it go unrenewed for a whole `ttl`, and the
 *   owner stops its work when it could not renew within `ttl` less one renewal interval of its
 *   own last renewal request, which is sooner. Clocks of different machines need not agree.
 * - A process that shuts down releases its leases, and another takes them at once; one that dies
 *   is taken over within `ttl` and one renewal interval.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Collection, DocumentStore, Fence } from '../readstore/port.js';

/** The collection of leases; not a read model (no version, no checkpoint, not rebuilt). */
const OWNERSHIP = 'ownership';

export interface LeaseDoc {
  [field: string]: unknown;
  /** The owning process (`Ownership.me`); null once released. */
  holder: string | null;
  host: string;
  pid: number;
  /** The fencing token: grows with every takeover. */
  token: number;
  /** Grows with every renewal: watchers see the lease live. */
  beat: number;
  ttl_ms: number;
  /** Wall-clock times, for people reading `projections status`. */
  acquired_at: string;
  renewed_at: string;
}

/** What work is given while its process owns it. */
export interface Owned {
  /** Aborted as soon as the lease is lost (or the process stops): stop at once. */
  signal: AbortSignal;
  /** Fence every commit with it: the store refuses it once the lease has been taken over. */
  fence: Fence;
}

export type Work = (owned: Owned) => Promise<void>;

export interface Exclusive {
  /** Resolves after the first attempt to take the lease, taken or not. */
  started: Promise<void>;
  /** True while this process owns the lease. */
  readonly owned: boolean;
  /** Stops the work and releases the lease. */
  stop(): Promise<void>;
}

const now = () => performance.now();

export class Ownership {
  /** This process, unique even for two runtimes in one process (tests). */
  readonly me = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly leases: Collection<LeaseDoc>;
  private readonly running = new Set<Exclusive>();
  readonly renewMs: number;

  constructor(
    private readonly docs: DocumentStore,
    private readonly log: Logger,
    readonly ttlMs: number,
  ) {
    this.leases = docs.collection<LeaseDoc>(OWNERSHIP);
    this.renewMs = Math.max(50, Math.round(ttlMs / 5));
  }

  async start(): Promise<void> {
    await this.docs.ensureCollection(OWNERSHIP, []);
  }

  /** Runs `work` whenever this process owns lease `name`, until stopped. */
  exclusive(name: string, work: Work): Exclusive {
    const stopping = new AbortController();
    let owned = false;
    let first!: () => void;
    const started = new Promise<void>((resolve) => (first = resolve));
    const loop = (async () => {
      let seen = null as { key: string; at: number } | null;
      while (!stopping.signal.aborted) {
        const attemptAt = now();
        let taken: LeaseDoc | null = null;
        try {
          const current = await this.leases.get(name);
          const key = current && `${current.holder}:${current.token}:${current.beat}`;
          if (current && key !== seen?.key) seen = { key: key!, at: attemptAt };
          if (!current || current.holder === null || current.holder === this.me || attemptAt - seen!.at >= this.ttlMs)
            taken = await this.take(name, current);
        } catch (error) {
          this.log.error({ err: error, lease: name }, 'could not read or take a lease; trying again');
        }
        first();
        if (taken) {
          owned = true;
          await this.hold(name, taken, attemptAt, work, stopping.signal);
          owned = false;
          seen = null;
        }
        await delay(this.renewMs, undefined, { signal: stopping.signal }).catch(() => undefined);
      }
    })();
    const exclusive: Exclusive = {
      started,
      get owned() {
        return owned;
      },
      stop: async () => {
        stopping.abort();
        first();
        await loop;
        this.running.delete(exclusive);
      },
    };
    this.running.add(exclusive);
    return exclusive;
  }

  /** Stops every piece of work and releases their leases. */
  async stop(): Promise<void> {
    await Promise.all([...this.running].map((x) => x.stop()));
  }

  /** Takes the lease: free, released, or watched unrenewed for a whole ttl. Null when another won. */
  private take(name: string, current: LeaseDoc | null): Promise<LeaseDoc | null> {
    const at = new Date().toISOString();
    const mine = {
      holder: this.me,
      host: os.hostname(),
      pid: process.pid,
      ttl_ms: this.ttlMs,
      acquired_at: at,
      renewed_at: at,
      beat: 0,
    };
    return this.docs.update<LeaseDoc>(OWNERSHIP, name, {
      // Exactly the record watched: if it moved meanwhile (renewed, taken), this take loses.
      when: current
        ? { holder: current.holder, token: current.token, beat: current.beat }
        : { token: { $exists: false } },
      set: mine,
      inc: { token: 1 },
      upsert: current === null,
    });
  }

  /** Runs `work` while renewing the lease; returns once it is lost, or released on stop. */
  private async hold(name: string, lease: LeaseDoc, takenAt: number, work: Work, stopping: AbortSignal): Promise<void> {
    const { token } = lease;
    const ours = { holder: this.me, token };
    const lost = new AbortController();
    const onStop = () => lost.abort();
    stopping.addEventListener('abort', onStop, { once: true });
    // Others take over no sooner than ttl after they saw our last renewal, which was after we asked.
    let watchdog: NodeJS.Timeout | undefined;
    const ownedUntil = (askedAt: number) => {
      clearTimeout(watchdog);
      watchdog = setTimeout(
        () => {
          this.log.warn({ lease: name }, 'could not renew a lease in time; stopping its work');
          lost.abort();
        },
        Math.max(0, askedAt + this.ttlMs - this.renewMs - now()),
      );
    };
    ownedUntil(takenAt);
    this.log.info({ lease: name, token }, 'took ownership');
    const working = work({ signal: lost.signal, fence: { collection: OWNERSHIP, id: name, when: ours } })
      .catch((error: unknown) => this.log.error({ err: error, lease: name }, 'owned work failed'))
      .finally(() => lost.abort());
    while (!lost.signal.aborted) {
      await delay(this.renewMs, undefined, { signal: lost.signal }).catch(() => undefined);
      if (lost.signal.aborted) break;
      const askedAt = now();
      try {
        const renewed = await this.docs.update(OWNERSHIP, name, {
          when: ours,
          set: { renewed_at: new Date().toISOString() },
          inc: { beat: 1 },
        });
        if (!renewed) {
          this.log.warn({ lease: name }, 'lost ownership to another process; stopping its work');
          lost.abort();
        } else ownedUntil(askedAt);
      } catch (error) {
        this.log.error({ err: error, lease: name }, 'could not renew a lease; trying again');
      }
    }
    clearTimeout(watchdog);
    stopping.removeEventListener('abort', onStop);
    await working;
    // Released for another to take at once (only if it is still ours).
    await this.docs
      .update(OWNERSHIP, name, { when: ours, set: { holder: null, renewed_at: new Date().toISOString() } })
      .catch((error: unknown) => this.log.warn({ err: error, lease: name }, 'could not release a lease'));
  }
}

/** Every lease of the store, for `projections status`. */
export async function listLeases(docs: DocumentStore): Promise<Array<{ name: string } & LeaseDoc>> {
  await docs.ensureCollection(OWNERSHIP, []);
  const leases: Array<{ name: string } & LeaseDoc> = [];
  for await (const [name, lease] of docs.collection<LeaseDoc>(OWNERSHIP).scan()) leases.push({ name, ...lease });
  return leases;
}
