import { describe, expect, it } from 'vitest';
import { accessAuditProjection } from '../../projections/team/access-audit.js';
import { apiKeysProjection } from '../../projections/user/api-keys.js';
import { teamMembersProjection } from '../../projections/team/team-members.js';
import { factoriesProjection } from '../../projections/factory/factories.js';
import { identitiesProjection } from '../../projections/identity/identities.js';
import { teamsProjection } from '../../projections/team/teams.js';
import { usersProjection } from '../../projections/user/users.js';
import type { AnyProjection } from '../../src/projector/projection.js';
import { metadata, project, recorded } from '../helpers/projection-spec.js';

const agentKey = (hash: string) => ({
  type: 'ApiKeyIssued',
  data: { key_id: `k-${hash}`, key_hash: hash, principal: { type: 'agent', uid: 'a-1' } },
});

const history = recorded([
  { type: 'TeamCreated', data: { uid: 't-1', name: 'Core' } },
  { type: 'UserRegistered', data: { uid: 'u-1', email: 'a@example.com', display_name: 'A' } },
  { type: 'ApiKeyIssued', data: { key_id: 'k-u', key_hash: 'hu', principal: { type: 'user', uid: 'u-1' } } },
  { type: 'MemberAdded', data: { team_uid: 't-1', user_uid: 'u-1', role: 'admin' } },
  {
    type: 'FactoryCreated',
    data: { uid: 'f-1', team_uid: 't-1', name: 'Pay', alias: null, description: null, repositories: [] },
  },
  {
    type: 'FactoryUpdated',
    data: { uid: 'f-1', changes: { alias: 'p' } },
    metadata: metadata('2026-01-02T00:00:00.000Z'),
  },
  {
    type: 'AgentIdentityCreated',
    data: { uid: 'a-1', team_uid: 't-1', profile: { name: 'F', agent_type: 'FOREMAN', factory_uid: 'f-1' } },
  },
  agentKey('h1'),
  agentKey('h2'),
  { type: 'AgentIdentityUpdated', data: { uid: 'a-1', changes: { name: 'Foreman' } } },
  {
    type: 'FactoryCreated',
    data: { uid: 'f-2', team_uid: 't-1', name: 'Gone', alias: null, description: null, repositories: [] },
  },
  { type: 'FactoryDeleted', data: { uid: 'f-2' } },
  { type: 'AgentIdentityDeleted', data: { uid: 'a-1', revoked_key_hashes: ['h1', 'h2'] } },
]);

describe('projections', () => {
  it('builds the factory list, with foreman and updates, without deleted factories', async () => {
    const docs = await project(factoriesProjection, history);
    expect(Object.keys(docs)).toEqual(['f-1']);
    expect(docs['f-1']).toMatchObject({
      name: 'Pay',
      alias: 'p',
      foreman_uid: 'a-1',
      creator: { uid: 'u-1' },
      updated_at: '2026-01-02T00:00:00.000Z',
    });
  });

  it('keeps memberships on the user and keys by hash, revoking an agent’s keys with it', async () => {
    expect((await project(usersProjection, history))['u-1']).toMatchObject({
      memberships: [{ team_uid: 't-1', role: 'admin' }],
    });
    const keys = await project(apiKeysProjection, history);
    expect(Object.keys(keys)).toEqual(['hu']);
    expect(keys.hu).toMatchObject({ principal_type: 'user', principal_uid: 'u-1' });
  });

  it('drops a deleted agent identity and keeps teams', async () => {
    expect(await project(identitiesProjection, history.slice(0, -1))).toMatchObject({
      'a-1': { name: 'Foreman', factory_uid: 'f-1' },
    });
    expect(await project(identitiesProjection, history)).toEqual({});
    expect(await project(teamsProjection, history)).toEqual({
      't-1': { uid: 't-1', name: 'Core', created_at: '2026-01-01T00:00:00.000Z' },
    });
  });

  const all: AnyProjection[] = [
    factoriesProjection,
    usersProjection,
    apiKeysProjection,
    identitiesProjection,
    teamsProjection,
  ];
  it.each(all.map((p) => [p.name, p] as const))(
    '%s: the same events applied twice, or one at a time, give the same documents',
    async (_name, p) => {
      const once = await project(p, history);
      expect(await project(p, history, { times: 2 })).toEqual(once);
      expect(await project(p, history, { batchSize: 1 })).toEqual(once);
    },
  );

  // Access granted and taken away: a member who leaves, keys revoked, an agent deleted.
  const userKey = (id: string, uid = 'u-2') => ({
    type: 'ApiKeyIssued',
    data: { key_id: id, key_hash: `h-${id}`, principal: { type: 'user', uid }, label: id, last4: 'wxyz' },
  });
  const access = recorded([
    { type: 'TeamCreated', data: { uid: 't-1', name: 'Core' } },
    { type: 'MemberAdded', data: { team_uid: 't-1', user_uid: 'u-1', role: 'admin' } },
    { type: 'UserRegistered', data: { uid: 'u-1', email: 'a@example.com', display_name: 'A' } },
    { type: 'TeamCreated', data: { uid: 't-2', name: 'Side' }, metadata: metadata(undefined, 'u-2') },
    { type: 'UserRegistered', data: { uid: 'u-2', email: 'b@example.com', display_name: 'B' } },
    { type: 'MemberAdded', data: { team_uid: 't-2', user_uid: 'u-2', role: 'admin' } },
    { type: 'InvitationIssued', data: { uid: 'u-2', team_uid: 't-1', invitation_hash: 'ih' } },
    { type: 'MemberAdded', data: { team_uid: 't-1', user_uid: 'u-2', role: 'member' } },
    userKey('k1'),
    userKey('k2'),
    {
      type: 'ApiKeyRevoked',
      data: { key_id: 'k1', key_hash: 'h-k1', principal: { type: 'user', uid: 'u-2' } },
      metadata: metadata(undefined, 'u-2'),
    },
    {
      type: 'AgentIdentityCreated',
      data: { uid: 'a-1', team_uid: 't-1', profile: { name: 'F', agent_type: 'CUSTOM' } },
    },
    { type: 'AgentIdentityUpdated', data: { uid: 'a-1', changes: { prompt: 'p' } } },
    { type: 'AgentIdentityUpdated', data: { uid: 'a-1', changes: { on_behalf_of_enabled: true } } },
    agentKey('ha'),
    { type: 'AgentIdentityDeleted', data: { uid: 'a-1', revoked_key_hashes: ['ha'], revoked_key_ids: ['k-ha'] } },
    {
      type: 'MemberRemoved',
      data: { team_uid: 't-1', user_uid: 'u-2', role: 'member' },
      metadata: metadata('2026-01-03T00:00:00.000Z'),
    },
    userKey('k3'),
  ]);

  it('drops a revoked key and keeps what a list shows of the others', async () => {
    const keys = await project(apiKeysProjection, access);
    expect(Object.keys(keys).sort()).toEqual(['h-k2', 'h-k3']);
    expect(keys['h-k2']).toEqual({
      key_id: 'k2',
      principal_type: 'user',
      principal_uid: 'u-2',
      label: 'k2',
      last4: 'wxyz',
      expires_at: null,
      created_at: '2026-01-01T00:00:00.000Z',
      created_by: { type: 'user', uid: 'u-1' },
    });
  });

  it('takes a removed membership from the user and from the team’s members', async () => {
    expect((await project(usersProjection, access))['u-2']).toMatchObject({
      memberships: [{ team_uid: 't-2', role: 'admin' }],
    });
    const members = await project(teamMembersProjection, access);
    expect(Object.values(members).map((m) => [m.team_uid, m.user_uid, m.role])).toEqual([
      ['t-1', 'u-1', 'admin'],
      ['t-2', 'u-2', 'admin'],
    ]);
  });

  it('audits each team’s grants and revocations, a user’s keys for the teams they are in at the time', async () => {
    const docs = await project(accessAuditProjection, access);
    const of = (team: string) =>
      Object.entries(docs)
        .filter(([id, d]) => !id.includes('/') && d.team_uid === team) // entries, not the tables
        .map(([, d]) => d)
        .sort((a, b) => String(a.order).localeCompare(String(b.order)))
        .map((d) => [d.type, d.data]);
    expect(of('t-1')).toEqual([
      ['TeamCreated', { uid: 't-1', name: 'Core' }],
      ['MemberAdded', { team_uid: 't-1', user_uid: 'u-1', role: 'admin' }],
      ['InvitationIssued', { uid: 'u-2', team_uid: 't-1' }],
      ['MemberAdded', { team_uid: 't-1', user_uid: 'u-2', role: 'member' }],
      ['ApiKeyIssued', expect.objectContaining({ key_id: 'k1', label: 'k1', last4: 'wxyz', expires_at: null })],
      ['ApiKeyIssued', expect.objectContaining({ key_id: 'k2' })],
      ['ApiKeyRevoked', { key_id: 'k1', principal: { type: 'user', uid: 'u-2' } }],
      [
        'AgentIdentityCreated',
        { uid: 'a-1', team_uid: 't-1', name: 'F', agent_type: 'CUSTOM', on_behalf_of_enabled: null },
      ],
      ['AgentIdentityUpdated', { uid: 'a-1', on_behalf_of_enabled: true }],
      ['ApiKeyIssued', expect.objectContaining({ key_id: 'k-ha', principal: { type: 'agent', uid: 'a-1' } })],
      ['AgentIdentityDeleted', { uid: 'a-1', revoked_key_ids: ['k-ha'] }],
      ['MemberRemoved', { team_uid: 't-1', user_uid: 'u-2', role: 'member' }],
    ]);
    expect(of('t-2').map(([type]) => type)).toEqual([
      'TeamCreated',
      'MemberAdded',
      'ApiKeyIssued',
      'ApiKeyIssued',
      'ApiKeyRevoked',
      'ApiKeyIssued',
    ]);
    expect(JSON.stringify(docs)).not.toMatch(/h-k|"ih"/);
  });

  it.each(
    [apiKeysProjection, usersProjection, teamMembersProjection, accessAuditProjection].map((p) => [p.name, p] as const),
  )('%s: access events applied twice, or one at a time, give the same documents', async (_name, p) => {
    const once = await project(p, access);
    expect(await project(p, access, { times: 2 })).toEqual(once);
    expect(await project(p, access, { batchSize: 1 })).toEqual(once);
  });
});
