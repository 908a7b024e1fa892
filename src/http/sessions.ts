/**
 * Console sessions: a cookie that stands for an API key. The cookie holds a random token; the read
 * store keeps, under the token's hash, the hash of the key it was exchanged for (a collection that
 * is not a read model, like `ownership`, so every process of a store sees it and a sign-out through
 * one process ends the session on all). A request with the cookie is admitted exactly as a bearer
 * request with that key (auth.ts, through access.ts), so a revoked key, a deleted user or a removed
 * member ends the session, or the team within it, wherever the request lands.
 *
 * A session ends after CONSOLE_SESSION_IDLE_MINUTES without a request, and at the latest
 * CONSOLE_SESSION_MAX_HOURS after sign-in. Its last use is written at most once a minute (or a
 * tenth of the idle timeout, when shorter), so the idle timeout holds within that.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { Unauthorized } from '../kernel/errors.js';
import type { DocumentStore } from '../readstore/port.js';

export const SESSIONS = 'console_sessions';
export const SESSION_COOKIE = 'shopfloor_session';

/** Expired sessions removed at each sign-in: the collection stays as large as the sessions in use. */
const SWEEP_BATCH = 100;

interface SessionDoc {
  [field: string]: unknown;
  /** The document's id: the hash of the cookie's token. */
  token_hash: string;
  key_hash: string;
  user_uid: string;
  /** Milliseconds since the epoch, by the server's clock. */
  created_at: number;
  seen_at: number;
}

export interface SessionLimits {
  idleMs: number;
  maxMs: number;
}

/** A session as a request uses it. */
export interface Session {
  id: string;
  keyHash: string;
  userUid: string;
  /** When it ends unless used again (ms since the epoch). */
  expiresAt: number;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export class Sessions {
  constructor(
    private readonly docs: DocumentStore,
    private readonly clock: Clock,
    readonly limits: SessionLimits,
  ) {}

  private get collection() {
    return this.docs.collection<SessionDoc>(SESSIONS);
  }

  private now(): number {
    return this.clock.now().getTime();
  }

  private expiry(doc: SessionDoc): number {
    return Math.min(doc.seen_at + this.limits.idleMs, doc.created_at + this.limits.maxMs);
  }

  /** Opens a session for a user's key; the token goes into the cookie and is kept nowhere else. */
  async open(keyHash: string, userUid: string): Promise<{ token: string; session: Session }> {
    await this.sweep();
    const token = randomBytes(32).toString('base64url');
    const now = this.now();
    const id = hashToken(token);
    const doc: SessionDoc = { token_hash: id, key_hash: keyHash, user_uid: userUid, created_at: now, seen_at: now };
    await this.docs.update(SESSIONS, id, { set: doc, upsert: true });
    return { token, session: this.toSession(id, doc) };
  }

  /** The live session of a cookie's token, its use noted; 401 once it ended (and it is removed then). */
  async use(token: string): Promise<Session> {
    const id = hashToken(token);
    const doc = await this.collection.get(id);
    if (!doc) throw new Unauthorized('The console session has ended: sign in again');
    const now = this.now();
    if (this.expiry(doc) <= now) {
      await this.docs.remove(SESSIONS, id);
      throw new Unauthorized('The console session timed out: sign in again');
    }
    const touchEvery = Math.min(60_000, this.limits.idleMs / 10);
    if (now - doc.seen_at >= touchEvery) {
      // Conditional, so two processes noting the same use write once; either write is as good.
      await this.docs.update(SESSIONS, id, { when: { seen_at: doc.seen_at }, set: { seen_at: now } });
      doc.seen_at = now;
    }
    return this.toSession(id, doc);
  }

  /** Ends a session (sign-out, or its key no longer opens its user). */
  async end(id: string): Promise<void> {
    await this.docs.remove(SESSIONS, id);
  }

  /** Ends the session of a cookie's token, if there is one. */
  endToken(token: string): Promise<void> {
    return this.end(hashToken(token));
  }

  private toSession(id: string, doc: SessionDoc): Session {
    return { id, keyHash: doc.key_hash, userUid: doc.user_uid, expiresAt: this.expiry(doc) };
  }

  /** Removes sessions idle past the timeout (the oldest first, a batch at a time). */
  private async sweep(): Promise<void> {
    const idleSince = this.now() - this.limits.idleMs;
    const page = await this.collection.find({
      filter: { seen_at: { $lt: idleSince } },
      sort: [
        ['seen_at', 'asc'],
        ['id', 'asc'],
      ],
      limit: SWEEP_BATCH,
    });
    for (const doc of page.items) await this.docs.remove(SESSIONS, doc.token_hash, { seen_at: doc.seen_at });
  }
}
