import { describe, it } from 'vitest';
import { userDecider } from '../../commands/user/decider.js';
import type { UserEvent } from '../../commands/user/events.js';
import { NotFound } from '../../src/kernel/errors.js';
import { deciderSpec } from '../helpers/decider-spec.js';

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
