/**
 * The rules every principal's keys share (users' in user/user-decider.ts, agents' in
 * identity/identity-decider.ts): how many may be live, when one may expire, which ones still open the door.
 */
import { InvalidRequest, LimitExceeded } from '../../src/kernel/errors.js';
import type { ApiKeyIssued, ApiKeyRevoked, KeyGrant } from './events.js';

/** Live (unrevoked) keys a principal may hold: the list of them is one unpaged page. */
const MAX_LIVE_KEYS = 100;

export interface LiveKey {
  key_hash: string;
  expires_at: string | null;
}

/** Live keys by key id. */
export type LiveKeys = Readonly<Record<string, LiveKey>>;

/** Whether a key still opens the door at `now` (an expired key is live until revoked, but useless). */
export const unexpired = (key: LiveKey, now: string): boolean =>
  key.expires_at === null || Date.parse(key.expires_at) > Date.parse(now);

export function evolveKeys(keys: LiveKeys, event: ApiKeyIssued | ApiKeyRevoked): LiveKeys {
  if (event.type === 'ApiKeyIssued') {
    const { key_id, key_hash, expires_at } = event.data;
    return { ...keys, [key_id]: { key_hash, expires_at: expires_at ?? null } };
  }
  const { [event.data.key_id]: _revoked, ...rest } = keys;
  return rest;
}

/** Refuses a key past the limit, or one that would be born expired. */
export function assertCanIssue(keys: LiveKeys, grant: KeyGrant, now: string): void {
  if (Object.keys(keys).length >= MAX_LIVE_KEYS)
    throw new LimitExceeded(`at most ${MAX_LIVE_KEYS} live API keys; revoke one first`);
  if (grant.expires_at && Date.parse(grant.expires_at) <= Date.parse(now))
    throw new InvalidRequest('expires_at must be in the future', [
      { path: 'body.expires_at', message: 'must be in the future' },
    ]);
}
