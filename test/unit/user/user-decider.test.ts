import { describe, it } from 'vitest';
import { userDecider } from '../../../commands/user/user-decider.js';
import type { UserEvent } from '../../../commands/user/events.js';
import { Conflict, Forbidden, InvalidRequest, LimitExceeded, NotFound } from '../../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../../helpers/decider-spec.js';

const spec = deciderSpec(userDecider);
const registered: UserEvent = { type: 'UserRegistered', data: { uid: 'u-1', email: 'a@b.co', display_name: 'a' } };
const invited = (hash: string, team_uid = 't-1'): UserEvent => ({
  type: 'InvitationIssued',
  data: { uid: 'u-1', team_uid, invitation_hash: hash },
});
const keyed: UserEvent = {
  type: 'ApiKeyIssued',
  data: { key_id: 'k-0', key_hash: 'h-0', principal: { type: 'user', uid: 'u-1' } },
};
const redeem = (hash: string) => ({
  type: 'RedeemInvitation' as const,
  data: { uid: 'u-1', invitation_hash: hash, key_id: 'k-1', key_hash: 'h-1' },
});
const issued = (id: string, expires_at: string | null = null): UserEvent => ({
  type: 'ApiKeyIssued',
  data: { key_id: id, key_hash: `h-${id}`, principal: { type: 'user', uid: 'u-1' }, expires_at },
});
const issue = (id: string, expires_at: string | null = null) => ({
  type: 'IssueUserApiKey' as const,
  data: { uid: 'u-1', key: { key_id: id, key_hash: `h-${id}`, label: 'l', last4: 'abcd', expires_at } },
});
const revoke = (key_id: string) => ({ type: 'RevokeUserApiKey' as const, data: { uid: 'u-1', key_id } });
const revoked = (id: string): UserEvent => ({
  type: 'ApiKeyRevoked',
  data: { key_id: id, key_hash: `h-${id}`, principal: { type: 'user', uid: 'u-1' } },
});
// userContext's now is 2026-01-01T00:00:00.000Z.
const PAST = '2025-12-31T23:00:00.000Z';
const FUTURE = '2026-01-02T00:00:00.000Z';

describe('user decider: invitations', () => {
  it('registers a user without a key, to wait for an invitation', () =>
    spec
      .given([])
      .when({ type: 'RegisterUser', data: { uid: 'u-1', email: 'a@b.co', display_name: 'a' } })
      .then([{ type: 'UserRegistered' }]));

  it("gives a keyless account its first key for its team's invitation, once", () => {
    spec
      .given([registered, invited('i-1')])
      .when(redeem('i-1'))
      .then([
        { type: 'InvitationRedeemed', data: { invitation_hash: 'i-1' } },
        { type: 'ApiKeyIssued', data: { key_hash: 'h-1', principal: { type: 'user', uid: 'u-1' } } },
      ]);
    spec
      .given([registered, invited('i-1'), { type: 'InvitationRedeemed', data: { uid: 'u-1', invitation_hash: 'i-1' } }])
      .when(redeem('i-1'))
      .thenThrows(NotFound);
  });

  it('opens no account that has a key: an admin never obtains one to an existing user', () =>
    spec
      .given([registered, keyed, invited('i-1')])
      .when(redeem('i-1'))
      .thenThrows(NotFound));

  it('opens no account another team invited too: its key would open both', () => {
    spec
      .given([registered, invited('i-1'), invited('i-2', 't-2')])
      .when(redeem('i-1'))
      .thenThrows(NotFound);
    spec
      .given([registered, invited('i-1'), invited('i-2', 't-2')])
      .when(redeem('i-2'))
      .thenThrows(NotFound);
  });

  it('knows no code it did not issue, nor a user that does not exist', () => {
    spec
      .given([registered, invited('i-1')])
      .when(redeem('other'))
      .thenThrows(NotFound);
    spec.given([]).when(redeem('i-1')).thenThrows(NotFound);
  });
});

describe('user decider: own API keys', () => {
  it('issues a key to the user themselves only', () => {
    spec
      .given([registered, keyed])
      .when(issue('k-1', FUTURE))
      .then([{ type: 'ApiKeyIssued', data: { key_id: 'k-1', label: 'l', last4: 'abcd', expires_at: FUTURE } }]);
    spec.given([registered, keyed]).when(issue('k-1'), userContext('u-2')).thenThrows(Forbidden);
    spec
      .given([registered, keyed])
      .when(issue('k-1'), { ...userContext(), actor: { type: 'agent', uid: 'u-1' } })
      .thenThrows(Forbidden);
    spec.given([]).when(issue('k-1')).thenThrows(NotFound);
  });

  it('refuses a key born expired, and one past the limit of live keys', () => {
    spec.given([registered, keyed]).when(issue('k-1', PAST)).thenThrows(InvalidRequest);
    const hundred = Array.from({ length: 100 }, (_, i) => issued(`k-${i}`));
    spec
      .given([registered, ...hundred])
      .when(issue('k-x'))
      .thenThrows(LimitExceeded);
    spec
      .given([registered, ...hundred, revoked('k-5')])
      .when(issue('k-x'))
      .then([{ type: 'ApiKeyIssued' }]);
  });

  it('revokes a key while another one works, never the last working one', () => {
    spec
      .given([registered, keyed, issued('k-1')])
      .when(revoke('k-1'))
      .then([
        { type: 'ApiKeyRevoked', data: { key_id: 'k-1', key_hash: 'h-k-1', principal: { type: 'user', uid: 'u-1' } } },
      ]);
    spec
      .given([registered, keyed])
      .when(revoke('k-0'))
      .thenThrows(Conflict, /last working/);
    spec
      .given([registered, keyed, issued('k-1'), revoked('k-1')])
      .when(revoke('k-0'))
      .thenThrows(Conflict);
    // An expired key does not count as working; revoking one is always fine.
    spec
      .given([registered, keyed, issued('k-1', PAST)])
      .when(revoke('k-0'))
      .thenThrows(Conflict);
    spec
      .given([registered, keyed, issued('k-1', PAST)])
      .when(revoke('k-1'))
      .then([{ type: 'ApiKeyRevoked' }]);
  });

  it("knows no key it did not issue or already revoked, and revokes no other user's", () => {
    spec
      .given([registered, keyed, issued('k-1')])
      .when(revoke('k-9'))
      .thenThrows(NotFound);
    spec
      .given([registered, keyed, issued('k-1'), revoked('k-1')])
      .when(revoke('k-1'))
      .thenThrows(NotFound);
    spec
      .given([registered, keyed, issued('k-1')])
      .when(revoke('k-1'), userContext('u-2'))
      .thenThrows(Forbidden);
  });

  it('opens no account by invitation once it had a key, even if every key was revoked since', () =>
    spec
      .given([registered, keyed, issued('k-1'), revoked('k-0'), revoked('k-1'), invited('i-1')])
      .when(redeem('i-1'))
      .thenThrows(NotFound));
});
