/**
 * What a key opens, and for how long: the one revocation mechanism of every request, including
 * those that wait or stay open (long polls now; event streams and console sessions, whose cookie
 * maps to a key, are to use the same).
 *
 * A feature says how a key maps to a principal (`PrincipalSource`: a lookup, and the read models
 * it reads). Here, on top of it:
 * - `resolve`: every request asks, so answers are cached until one of those read models changes;
 * - `recheck`: the read models themselves, past the cache, for a request about to hand something
 *   out (a run queued after a revocation is visible only with the revocation, so it never goes to
 *   the revoked key);
 * - `watch`: an AbortSignal for a request held open, aborted with the 401/403 to answer once its
 *   key stops opening its principal or its team (revoked, expired, the agent deleted, the member
 *   removed), as soon as this process's projector shows the change.
 */
import type { Clock } from '../clock.js';
import { Forbidden, Unauthorized } from '../kernel/errors.js';
import type { AnyProjection } from '../projector/projection.js';
import type { Principal } from './principal.js';

/** The principal a key opens, and when the key stops opening it (ms since the epoch; null: never). */
export interface KeyGrant {
  principal: Principal;
  expires: number | null;
}

export interface PrincipalSource {
  /** The principal the key with this hash opens, read from the read models; null: none. */
  lookUp(keyHash: string): Promise<KeyGrant | null>;
  /** The read models `lookUp` reads: its answers may change whenever one of them does. */
  readModels: readonly AnyProjection[];
}

/** What a request was admitted with: its key (by hash), the principal it opened, the team it acts for. */
export interface Admission {
  keyHash: string;
  principal: Principal;
  team: string | null;
}

/** A watched admission: `signal` aborts (its reason the error to answer) once it lapses. */
export interface Watch {
  signal: AbortSignal;
  /** Stops watching (the request is over). */
  stop(): void;
}

/** The projector's change counters and their notifications. */
interface Changes {
  changes(p: AnyProjection): number;
  onChange(listener: (p: AnyProjection) => void): () => void;
}

interface Watching {
  admission: Admission;
  controller: AbortController;
  expiry: NodeJS.Timeout | null;
}

/** Enough for every key in use at once; past it the cache starts over rather than grow. */
const CACHE_LIMIT = 10_000;
/** The longest timer Node keeps; an expiry further off is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Access {
  private readonly cache = new Map<string, Promise<KeyGrant | null>>();
  private cachedAt: number;
  private readonly watching = new Set<Watching>();
  private rechecking = false;
  private again = false;

  constructor(
    private readonly source: PrincipalSource,
    private readonly projector: Changes,
    private readonly clock: Clock,
  ) {
    this.cachedAt = this.generation();
    const readModels = new Set(source.readModels);
    projector.onChange((p) => {
      if (readModels.has(p)) void this.recheckWatched();
    });
  }

  /** The change counts only grow, so their sum moves whenever one of the read models changes. */
  private generation(): number {
    return this.source.readModels.reduce((sum, p) => sum + this.projector.changes(p), 0);
  }

  private cached(keyHash: string): Promise<KeyGrant | null> {
    const now = this.generation();
    if (now !== this.cachedAt || this.cache.size >= CACHE_LIMIT) {
      this.cache.clear();
      this.cachedAt = now;
    }
    let found = this.cache.get(keyHash);
    if (!found) {
      const asked = this.source.lookUp(keyHash);
      this.cache.set(keyHash, (found = asked));
      // A failed lookup is not an answer: the next request asks again.
      asked.catch(() => this.cache.get(keyHash) === asked && this.cache.delete(keyHash));
    }
    return found;
  }

  /** The principal while the key is unexpired (checked at every call, cached or not). */
  private opened(grant: KeyGrant | null): Principal | null {
    return grant && (grant.expires === null || grant.expires > this.clock.now().getTime()) ? grant.principal : null;
  }

  /** The principal the key opens now (cached until a read model the lookup reads changes). */
  async resolve(keyHash: string): Promise<Principal | null> {
    return this.opened(await this.cached(keyHash));
  }

  /** Why the admission no longer holds (the error to answer), or null while it does. */
  private lapsed(a: Admission, grant: KeyGrant | null): Error | null {
    const principal = this.opened(grant);
    if (principal?.uid !== a.principal.uid || principal.type !== a.principal.type)
      return new Unauthorized('The API key is not valid or has been revoked');
    if (a.team !== null && !principal.teams.has(a.team)) return new Forbidden(`not a member of team ${a.team}`);
    return null;
  }

  /** Throws the 401/403 to answer when the admission no longer holds, asking the read models themselves. */
  async recheck(a: Admission): Promise<void> {
    const why = this.lapsed(a, await this.source.lookUp(a.keyHash));
    if (why) throw why;
  }

  /** Watches an admission until `stop`; looked at once now, as it may have lapsed since it was made. */
  watch(admission: Admission): Watch {
    const w: Watching = { admission, controller: new AbortController(), expiry: null };
    this.watching.add(w);
    void this.check(w);
    return { signal: w.controller.signal, stop: () => this.unwatch(w) };
  }

  private unwatch(w: Watching): void {
    this.watching.delete(w);
    if (w.expiry) clearTimeout(w.expiry);
  }

  private async check(w: Watching): Promise<void> {
    let grant: KeyGrant | null;
    try {
      grant = await this.cached(w.admission.keyHash);
    } catch {
      return; // no answer: the next change asks again
    }
    if (!this.watching.has(w)) return;
    const why = this.lapsed(w.admission, grant);
    if (why) {
      this.unwatch(w);
      w.controller.abort(why);
    } else this.armExpiry(w, grant!.expires);
  }

  /** A timer for the key's expiry, by the server's clock. */
  private armExpiry(w: Watching, expires: number | null): void {
    if (w.expiry) clearTimeout(w.expiry);
    w.expiry = null;
    if (expires === null) return;
    const ms = Math.min(Math.max(expires - this.clock.now().getTime(), 0), MAX_TIMER_MS);
    w.expiry = setTimeout(() => void this.check(w), ms).unref();
  }

  /** Looks at every watched admission again; changes that come meanwhile make one more round. */
  private async recheckWatched(): Promise<void> {
    if (this.rechecking) {
      this.again = true;
      return;
    }
    this.rechecking = true;
    try {
      do {
        this.again = false;
        await Promise.all([...this.watching].map((w) => this.check(w)));
      } while (this.again);
    } finally {
      this.rechecking = false;
    }
  }
}
