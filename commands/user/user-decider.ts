import type { Decider } from '../../src/kernel/decider.js';
import { Conflict, Forbidden, NotFound } from '../../src/kernel/errors.js';
import type { KeyGrant, UserEvent } from './events.js';
import { assertCanIssue, evolveKeys, type LiveKeys, unexpired } from './keys.js';
import { own } from '../../src/own-keys.js';

export type UserCommand =
  | {
      type: 'RegisterUser';
      /** Without a key the account waits for an invitation to be redeemed. */
      data: { uid: string; email: string; display_name: string; key?: KeyGrant };
    }
  | { type: 'InviteUser'; data: { uid: string; team_uid: string; invitation_hash: string } }
  | { type: 'RedeemInvitation'; data: { uid: string; invitation_hash: string } & KeyGrant }
  | { type: 'IssueUserApiKey'; data: { uid: string; key: KeyGrant } }
  | { type: 'RevokeUserApiKey'; data: { uid: string; key_id: string } };

export type UserState =
  | { status: 'none' }
  | {
      status: 'live';
      uid: string;
      email: string;
      /** Every key ever issued, revoked or not: an account that ever had one is not keyless. */
      key_ids: string[];
      /** The keys not revoked, by key id. */
      keys: LiveKeys;
      /** By invitation hash. */
      invitations: Record<string, { team_uid: string; redeemed: boolean }>;
    };

/** A user manages their own keys: nobody else, not even a team admin (a key may open other teams). */
function assertOwnKeys(state: UserState, actor: { type: string; uid: string }, uid: string) {
  if (state.status !== 'live') throw new NotFound('user', uid);
  if (actor.type !== 'user' || actor.uid !== uid) throw new Forbidden("only a user manages the user's own API keys");
  return state;
}

export const userDecider: Decider<UserCommand, UserEvent, UserState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    if (event.type === 'UserRegistered')
      return { status: 'live', uid: event.data.uid, email: event.data.email, key_ids: [], keys: {}, invitations: {} };
    if (state.status !== 'live') return state;
    switch (event.type) {
      case 'ApiKeyIssued':
        return { ...state, key_ids: [...state.key_ids, event.data.key_id], keys: evolveKeys(state.keys, event) };
      case 'ApiKeyRevoked':
        return { ...state, keys: evolveKeys(state.keys, event) };
      case 'InvitationIssued': {
        const invitation = { team_uid: event.data.team_uid, redeemed: false };
        return { ...state, invitations: { ...state.invitations, [event.data.invitation_hash]: invitation } };
      }
      case 'InvitationRedeemed': {
        const invitation = own(state.invitations, event.data.invitation_hash);
        if (!invitation) return state;
        return {
          ...state,
          invitations: { ...state.invitations, [event.data.invitation_hash]: { ...invitation, redeemed: true } },
        };
      }
    }
  },

  decide: (command, state, context) => {
    switch (command.type) {
      case 'RegisterUser': {
        if (state.status !== 'none') throw new Conflict(`user ${command.data.uid} exists`);
        const { uid, email, display_name, key } = command.data;
        const registered: UserEvent = { type: 'UserRegistered', data: { uid, email, display_name } };
        if (!key) return [registered];
        return [registered, { type: 'ApiKeyIssued', data: { ...key, principal: { type: 'user', uid } } }];
      }
      case 'InviteUser': {
        if (state.status !== 'live') throw new NotFound('user', command.data.uid);
        return [{ type: 'InvitationIssued', data: command.data }];
      }
      case 'RedeemInvitation': {
        const { uid, invitation_hash, ...grant } = command.data;
        // One answer for every refusal, so a code tells its holder nothing but that it is spent.
        const refused = new NotFound('invitation');
        if (state.status !== 'live') throw refused;
        const invitation = own(state.invitations, invitation_hash);
        if (!invitation || invitation.redeemed) throw refused;
        // Only a keyless account gets a first key: a user who already has one is not opened by an
        // admin's invitation. Nor is an account another team has invited meanwhile: its key
        // would open that team too, and no admin may obtain a key that opens another team.
        if (state.key_ids.length > 0) throw refused;
        if (Object.values(state.invitations).some((i) => i.team_uid !== invitation.team_uid)) throw refused;
        return [
          { type: 'InvitationRedeemed', data: { uid, invitation_hash } },
          { type: 'ApiKeyIssued', data: { ...grant, principal: { type: 'user', uid } } },
        ];
      }
      case 'IssueUserApiKey': {
        const { uid, key } = command.data;
        const live = assertOwnKeys(state, context.actor, uid);
        assertCanIssue(live.keys, key, context.now);
        return [{ type: 'ApiKeyIssued', data: { ...key, principal: { type: 'user', uid } } }];
      }
      case 'RevokeUserApiKey': {
        const { uid, key_id } = command.data;
        const live = assertOwnKeys(state, context.actor, uid);
        const key = own(live.keys, key_id);

        if (!key) throw new NotFound('API key', key_id);
        // No user locks themselves out, and so the bootstrap admin never locks the store: the
        // last key that still works goes only once another one does (create, then revoke).
        const others = Object.entries(live.keys).filter(([id, k]) => id !== key_id && unexpired(k, context.now));
        if (unexpired(key, context.now) && others.length === 0)
          throw new Conflict('this is your last working API key: create another one first', 'last_api_key');
        return [{ type: 'ApiKeyRevoked', data: { key_id, key_hash: key.key_hash, principal: { type: 'user', uid } } }];
      }
    }
  },
};
