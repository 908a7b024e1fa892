import type { Decider } from '../../src/kernel/decider.js';
import { Conflict, NotFound } from '../../src/kernel/errors.js';
import type { UserEvent } from './events.js';

type IssuedKey = { key_id: string; key_hash: string };

export type UserCommand =
  | {
      type: 'RegisterUser';
      /** Without a key the account waits for an invitation to be redeemed. */
      data: { uid: string; email: string; display_name: string } & Partial<IssuedKey>;
    }
  | { type: 'InviteUser'; data: { uid: string; team_uid: string; invitation_hash: string } }
  | { type: 'RedeemInvitation'; data: { uid: string; invitation_hash: string } & IssuedKey };

export type UserState =
  | { status: 'none' }
  | {
      status: 'live';
      uid: string;
      email: string;
      key_ids: string[];
      /** By invitation hash. */
      invitations: Record<string, { team_uid: string; redeemed: boolean }>;
    };

export const userDecider: Decider<UserCommand, UserEvent, UserState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    if (event.type === 'UserRegistered')
      return { status: 'live', uid: event.data.uid, email: event.data.email, key_ids: [], invitations: {} };
    if (state.status !== 'live') return state;
    switch (event.type) {
      case 'ApiKeyIssued':
        return { ...state, key_ids: [...state.key_ids, event.data.key_id] };
      case 'InvitationIssued': {
        const invitation = { team_uid: event.data.team_uid, redeemed: false };
        return { ...state, invitations: { ...state.invitations, [event.data.invitation_hash]: invitation } };
      }
      case 'InvitationRedeemed': {
        const invitation = state.invitations[event.data.invitation_hash];
        if (!invitation) return state;
        return {
          ...state,
          invitations: { ...state.invitations, [event.data.invitation_hash]: { ...invitation, redeemed: true } },
        };
      }
    }
  },

  decide: (command, state) => {
    switch (command.type) {
      case 'RegisterUser': {
        if (state.status !== 'none') throw new Conflict(`user ${command.data.uid} exists`);
        const { uid, email, display_name, key_id, key_hash } = command.data;
        const registered: UserEvent = { type: 'UserRegistered', data: { uid, email, display_name } };
        if (key_id === undefined || key_hash === undefined) return [registered];
        return [registered, { type: 'ApiKeyIssued', data: { key_id, key_hash, principal: { type: 'user', uid } } }];
      }
      case 'InviteUser': {
        if (state.status !== 'live') throw new NotFound('user', command.data.uid);
        return [{ type: 'InvitationIssued', data: command.data }];
      }
      case 'RedeemInvitation': {
        const { uid, invitation_hash, key_id, key_hash } = command.data;
        // One answer for every refusal, so a code tells its holder nothing but that it is spent.
        const refused = new NotFound('invitation');
        if (state.status !== 'live') throw refused;
        const invitation = state.invitations[invitation_hash];
        if (!invitation || invitation.redeemed) throw refused;
        // Only a keyless account gets a first key: a user who already has one is not opened by an
        // admin's invitation. Nor is an account another team has invited meanwhile: its key
        // would open that team too, and no admin may obtain a key that opens another team.
        if (state.key_ids.length > 0) throw refused;
        if (Object.values(state.invitations).some((i) => i.team_uid !== invitation.team_uid)) throw refused;
        return [
          { type: 'InvitationRedeemed', data: { uid, invitation_hash } },
          { type: 'ApiKeyIssued', data: { key_id, key_hash, principal: { type: 'user', uid } } },
        ];
      }
    }
  },
};
