import { describe, it } from 'vitest';
import { identityDecider } from '../../../commands/identity/identity-decider.js';
import type { IdentityEvent } from '../../../commands/identity/events.js';
import { Forbidden, InvalidRequest, NotFound } from '../../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../../helpers/decider-spec.js';

const spec = deciderSpec(identityDecider);
const profile = { name: 'Foreman', agent_type: 'FOREMAN' as const };
const created: IdentityEvent = { type: 'AgentIdentityCreated', data: { uid: 'a-1', team_uid: 't-1', profile } };
const key = (hash: string): IdentityEvent => ({
  type: 'ApiKeyIssued',
  data: { key_id: hash, key_hash: hash, principal: { type: 'agent', uid: 'a-1' } },
});
const revokedKey = (hash: string): IdentityEvent => ({
  type: 'ApiKeyRevoked',
  data: { key_id: hash, key_hash: hash, principal: { type: 'agent', uid: 'a-1' } },
});
const liveFactory = {
  status: 'live' as const,
  uid: 'f-1',
  team_uid: 't-1',
  name: 'F',
  alias: null,
  description: null,
  repositories: [],
};

describe('agent identity decider', () => {
  it('creates an agent linked to a factory of the team', () =>
    spec
      .given([])
      .when({
        type: 'CreateIdentity',
        data: { uid: 'a-1', team_uid: 't-1', profile: { ...profile, factory_uid: 'f-1' }, factory: liveFactory },
      })
      .then([{ type: 'AgentIdentityCreated' }]));

  it('refuses a factory of another team', () =>
    spec
      .given([])
      .when({
        type: 'CreateIdentity',
        data: {
          uid: 'a-1',
          team_uid: 't-1',
          profile: { ...profile, factory_uid: 'f-1' },
          factory: { ...liveFactory, team_uid: 't-2' },
        },
      })
      .thenThrows(InvalidRequest));

  it('lets only admins enable on_behalf_of', () =>
    spec
      .given([])
      .when(
        {
          type: 'CreateIdentity',
          data: { uid: 'a-1', team_uid: 't-1', profile: { ...profile, on_behalf_of_enabled: true }, factory: null },
        },
        userContext('u-1', { 't-1': 'member' }),
      )
      .thenThrows(Forbidden));

  it('lets no agent manage agents', () =>
    spec
      .given([created])
      .when(
        { type: 'DeleteIdentity', data: { uid: 'a-1' } },
        { ...userContext(), actor: { type: 'agent', uid: 'a-9' } },
      )
      .thenThrows(Forbidden));

  it('revokes every live key of the agent in the same event that deletes it', () =>
    spec
      .given([created, key('h1'), key('h2'), key('h3'), revokedKey('h2')])
      .when({ type: 'DeleteIdentity', data: { uid: 'a-1' } })
      .then([
        { type: 'AgentIdentityDeleted', data: { revoked_key_hashes: ['h1', 'h3'], revoked_key_ids: ['h1', 'h3'] } },
      ]));

  it('revokes one key, the last one too, for the people of its team only', () => {
    const revoke = { type: 'RevokeAgentApiKey' as const, data: { uid: 'a-1', key_id: 'h1' } };
    spec
      .given([created, key('h1')])
      .when(revoke)
      .then([
        { type: 'ApiKeyRevoked', data: { key_id: 'h1', key_hash: 'h1', principal: { type: 'agent', uid: 'a-1' } } },
      ]);
    spec
      .given([created, key('h1'), revokedKey('h1')])
      .when(revoke)
      .thenThrows(NotFound);
    spec
      .given([created, key('h1')])
      .when(revoke, userContext('u-2', { 't-2': 'admin' }))
      .thenThrows(NotFound);
    spec
      .given([created, key('h1')])
      .when(revoke, { ...userContext(), actor: { type: 'agent', uid: 'a-1' } })
      .thenThrows(Forbidden);
  });

  it('issues no key for a deleted agent', () =>
    spec
      .given([created, { type: 'AgentIdentityDeleted', data: { uid: 'a-1', revoked_key_hashes: [] } }])
      .when({ type: 'IssueAgentApiKey', data: { uid: 'a-1', key: { key_id: 'k', key_hash: 'h' } } })
      .thenThrows(NotFound));
});
