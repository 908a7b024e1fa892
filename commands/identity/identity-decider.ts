import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import { Forbidden, NotFound, Conflict, InvalidRequest } from '../../src/kernel/errors.js';
import type { FactoryState } from '../factory/events.js';
import type { KeyGrant } from '../user/events.js';
import { assertCanIssue, evolveKeys, type LiveKeys } from '../user/public.js';
import type { AgentProfile, IdentityEvent } from './events.js';
import { own, ownsKey } from '../../src/own-keys.js';

export type IdentityCommand =
  | {
      type: 'CreateIdentity';
      data: { uid: string; team_uid: string; profile: AgentProfile; factory: FactoryState | null };
    }
  | { type: 'UpdateIdentity'; data: { uid: string; changes: Partial<AgentProfile>; factory: FactoryState | null } }
  | { type: 'DeleteIdentity'; data: { uid: string } }
  | { type: 'IssueAgentApiKey'; data: { uid: string; key: KeyGrant } }
  | { type: 'RevokeAgentApiKey'; data: { uid: string; key_id: string } };

export type IdentityState =
  | { status: 'none' }
  | { status: 'deleted' }
  | { status: 'live'; uid: string; team_uid: string; profile: AgentProfile; keys: LiveKeys };

/** Only people manage agents, and only those of their own teams. */
function assertManager(context: DecideContext, teamUid: string, uid: string): void {
  if (!ownsKey(context.teams, teamUid)) throw new NotFound('agent identity', uid);
  if (context.actor.type !== 'user') throw new Forbidden('only users can manage agent identities');
}

function assertFactoryOfTeam(
  factory: FactoryState | null,
  factoryUid: string | null | undefined,
  teamUid: string,
): void {
  if (!factoryUid) return;
  if (factory?.status !== 'live' || factory.team_uid !== teamUid) {
    throw new InvalidRequest(`factory ${factoryUid} is not a factory of this team`, [
      { path: 'body.factory_uid', message: 'unknown factory' },
    ]);
  }
}

export const identityDecider: Decider<IdentityCommand, IdentityEvent, IdentityState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    switch (event.type) {
      case 'AgentIdentityCreated': {
        const { uid, team_uid, profile } = event.data;
        return { status: 'live', uid, team_uid, profile, keys: {} };
      }
      case 'AgentIdentityUpdated':
        return state.status === 'live' ? { ...state, profile: { ...state.profile, ...event.data.changes } } : state;
      case 'AgentIdentityDeleted':
        return { status: 'deleted' };
      case 'ApiKeyIssued':
      case 'ApiKeyRevoked':
        return state.status === 'live' ? { ...state, keys: evolveKeys(state.keys, event) } : state;
    }
  },

  decide: (command, state, context) => {
    if (command.type === 'CreateIdentity') {
      const { uid, team_uid, profile, factory } = command.data;
      if (state.status !== 'none') throw new Conflict(`agent identity ${uid} exists`);
      assertManager(context, team_uid, uid);
      assertFactoryOfTeam(factory, profile.factory_uid, team_uid);
      if (profile.on_behalf_of_enabled && own(context.teams, team_uid) !== 'admin') {
        throw new Forbidden('only team admins can enable on_behalf_of');
      }
      return [{ type: 'AgentIdentityCreated', data: { uid, team_uid, profile } }];
    }
    if (state.status !== 'live') throw new NotFound('agent identity', command.data.uid);
    assertManager(context, state.team_uid, state.uid);
    switch (command.type) {
      case 'UpdateIdentity': {
        const { changes, factory } = command.data;
        assertFactoryOfTeam(factory, changes.factory_uid, state.team_uid);
        if (changes.on_behalf_of_enabled && own(context.teams, state.team_uid) !== 'admin') {
          throw new Forbidden('only team admins can enable on_behalf_of');
        }
        return Object.keys(changes).length ? [{ type: 'AgentIdentityUpdated', data: { uid: state.uid, changes } }] : [];
      }
      case 'DeleteIdentity': {
        const keys = Object.entries(state.keys);
        return [
          {
            type: 'AgentIdentityDeleted',
            data: {
              uid: state.uid,
              revoked_key_hashes: keys.map(([, k]) => k.key_hash),
              revoked_key_ids: keys.map(([id]) => id),
            },
          },
        ];
      }
      case 'IssueAgentApiKey':
        assertCanIssue(state.keys, command.data.key, context.now);
        return [{ type: 'ApiKeyIssued', data: { ...command.data.key, principal: { type: 'agent', uid: state.uid } } }];
      case 'RevokeAgentApiKey': {
        // An agent's last key may go: its managers can always issue another.
        const key = own(state.keys, command.data.key_id);

        if (!key) throw new NotFound('API key', command.data.key_id);
        const principal = { type: 'agent' as const, uid: state.uid };
        return [{ type: 'ApiKeyRevoked', data: { key_id: command.data.key_id, key_hash: key.key_hash, principal } }];
      }
    }
  },
};
