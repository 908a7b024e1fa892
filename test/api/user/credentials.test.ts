/**
 * Taking access away (issue #17): users' and agents' keys are listed, created and revoked; team
 * admins remove members; every grant and revocation is in the team's audit; and a revocation is
 * honoured at once, by this process and by another one on the same store.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { hashApiKey } from '../../../src/http/api-key.js';
import { history } from '../../../queries/task/history-cli.js';
import { ADMIN_KEY, expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';

const clock = manualClock('2026-05-01T12:00:00.000Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, clock);
});
afterAll(() => t.close());

const newTeam = async (name: string, key = ADMIN_KEY) => (await t.call('POST', '/teams', { name }, key)).json().uid;
const status = async (key: string, url = '/teams', team?: string) =>
  (await t.call('GET', url, undefined, key, team ? { 'x-service-team-uid': team } : {})).statusCode;

describe("a user's own API keys", () => {
  it('are created with a label and shown once; the list shows each without the key or its hash', async () => {
    const { api_key: key } = await t.addMember(t.teamUid, { email: 'kim@example.com' });
    const created = await t.call('POST', '/me/api-keys', { label: 'laptop' }, key);
    expect(created.statusCode, created.body).toBe(201);
    const laptop = created.json();
    expect(laptop).toEqual({
      key_id: expect.any(String),
      api_key: expect.stringMatching(/^sf_/),
      label: 'laptop',
      last4: laptop.api_key.slice(-4),
      created_at: clock.now().toISOString(),
      created_by: { type: 'user', uid: expect.any(String) },
      expires_at: null,
    });
    expect(await status(laptop.api_key)).toBe(200);
    // A body is optional.
    expect((await t.call('POST', '/me/api-keys', undefined, key)).json()).toMatchObject({ label: null });

    const list = await t.call('GET', '/me/api-keys', undefined, laptop.api_key);
    expect(list.statusCode).toBe(200);
    const keys = list.json().api_keys;
    expect(keys.map((k: { label: string | null }) => k.label)).toEqual(['invitation', 'laptop', null]);
    expect(keys[1]).toEqual({ ...laptop, api_key: undefined });
    expect(list.body).not.toContain(laptop.api_key);
    expect(list.body).not.toContain(hashApiKey(laptop.api_key));
    // The log keeps the hash only.
    const events = await t.rt.events.readAll({ commit: -1n, prepare: -1n }, 100_000);
    expect(JSON.stringify(events.map((e) => e.data))).not.toContain(laptop.api_key);
  });

  it('revoked, answers 401 on the next request while the other keys go on working', async () => {
    const { api_key: first } = await t.addMember(t.teamUid, { email: 'lee@example.com' });
    const second = (await t.call('POST', '/me/api-keys', { label: 'ci' }, first)).json();
    // Used once, so the server has its principal in hand when it is revoked.
    expect(await status(second.api_key)).toBe(200);
    const res = await t.call('DELETE', `/me/api-keys/${second.key_id}`, undefined, first);
    expect(res.statusCode, res.body).toBe(204);
    expectProblem(await t.call('GET', '/teams', undefined, second.api_key), 401, 'authentication_required');
    expect(await status(first)).toBe(200);
    expect((await t.call('GET', '/me/api-keys', undefined, first)).json().api_keys).toHaveLength(1);
    // Revoked once: it is gone.
    await expectRefused(t, () => t.call('DELETE', `/me/api-keys/${second.key_id}`, undefined, first), 404);
  });

  it("cannot revoke the caller's last working key, so nobody (the bootstrap admin least of all) locks themselves out", async () => {
    const [bootstrap] = (await t.call('GET', '/me/api-keys')).json().api_keys;
    expect(bootstrap).toMatchObject({ label: 'bootstrap', last4: null, created_by: { type: 'system' } });
    await expectRefused(t, () => t.call('DELETE', `/me/api-keys/${bootstrap.key_id}`), 409, 'last_api_key');
    // Rotation: a new key first, then the old one goes.
    const { api_key: key } = await t.addMember(t.teamUid, { email: 'rot@example.com' });
    const [old] = (await t.call('GET', '/me/api-keys', undefined, key)).json().api_keys;
    const fresh = (await t.call('POST', '/me/api-keys', { label: 'new' }, key)).json();
    expect((await t.call('DELETE', `/me/api-keys/${old.key_id}`, undefined, fresh.api_key)).statusCode).toBe(204);
    expect(await status(key)).toBe(401);
    await expectRefused(t, () => t.call('DELETE', `/me/api-keys/${fresh.key_id}`, undefined, fresh.api_key), 409);
  });

  it('stop working when they expire, and an expired key does not count as a working one', async () => {
    const { api_key: key } = await t.addMember(t.teamUid, { email: 'exp@example.com' });
    const hour = (await t.call('POST', '/me/api-keys', { expires_at: '2026-05-01T15:00:00+02:00' }, key)).json();
    expect(hour.expires_at).toBe('2026-05-01T13:00:00.000Z');
    expect(await status(hour.api_key)).toBe(200);
    clock.advance(61 * 60_000);
    try {
      expectProblem(await t.call('GET', '/teams', undefined, hour.api_key), 401);
      // Still listed until revoked; revoking it is always allowed, the last working key never.
      const [invited] = (await t.call('GET', '/me/api-keys', undefined, key)).json().api_keys;
      await expectRefused(t, () => t.call('DELETE', `/me/api-keys/${invited.key_id}`, undefined, key), 409);
      expect((await t.call('DELETE', `/me/api-keys/${hour.key_id}`, undefined, key)).statusCode).toBe(204);
    } finally {
      clock.advance(-61 * 60_000);
    }
  });

  it('refuses bad bodies, past expiry, other users and agents without writing', async () => {
    const { api_key: key } = await t.addMember(t.teamUid, { email: 'bad@example.com' });
    const post = (body: unknown) => () => t.call('POST', '/me/api-keys', body, key);
    await expectRefused(t, post({ label: 'x'.repeat(101) }), 400);
    await expectRefused(t, post({ label: '  ' }), 400);
    await expectRefused(t, post({ expires_at: 'tomorrow' }), 400);
    await expectRefused(t, post({ expires_at: '2026-05-01T11:00:00Z' }), 400, 'invalid_request');
    await expectRefused(t, post({ scopes: ['all'] }), 400);
    // Another user's key is not the caller's: the same 404 as a key that does not exist.
    const [admins] = (await t.call('GET', '/me/api-keys')).json().api_keys;
    await expectRefused(t, () => t.call('DELETE', `/me/api-keys/${admins.key_id}`, undefined, key), 404);
    // Agents' keys are managed by people, under the agent.
    const agent = (await t.call('POST', '/agent/identities', { name: 'Keyless' })).json();
    const agentKey = (await t.call('POST', `/agent/identities/${agent.uid}/api-keys`)).json().api_key;
    await expectRefused(t, () => t.call('POST', '/me/api-keys', {}, agentKey), 403);
    expectProblem(await t.call('GET', '/me/api-keys', undefined, agentKey), 403);
  });
});

describe("an agent's API keys", () => {
  it('are listed with their creator and revoked one at a time by the people of its team, the last one too', async () => {
    const agent = (await t.call('POST', '/agent/identities', { name: 'Builder' })).json();
    const { api_key: member } = await t.addMember(t.teamUid, { email: 'ops@example.com' });
    const a = (await t.call('POST', `/agent/identities/${agent.uid}/api-keys`, { label: 'worker-1' })).json();
    const b = (await t.call('POST', `/agent/identities/${agent.uid}/api-keys`, undefined, member)).json();
    expect(b).toMatchObject({ key_id: expect.any(String), api_key: expect.stringMatching(/^sf_/), label: null });
    const list = await t.call('GET', `/agent/identities/${agent.uid}/api-keys`, undefined, member);
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().api_keys).toEqual([
      expect.objectContaining({ key_id: a.key_id, label: 'worker-1', created_by: { type: 'user', uid: t.adminUid } }),
      expect.objectContaining({ key_id: b.key_id, last4: b.api_key.slice(-4) }),
    ]);
    expect(list.body).not.toContain(a.api_key);

    expect(await status(a.api_key)).toBe(200);
    expect((await t.call('DELETE', `/agent/identities/${agent.uid}/api-keys/${a.key_id}`)).statusCode).toBe(204);
    expect(await status(a.api_key)).toBe(401);
    expect(await status(b.api_key)).toBe(200);
    const last = await t.call('DELETE', `/agent/identities/${agent.uid}/api-keys/${b.key_id}`, undefined, member);
    expect(last.statusCode).toBe(204);
    expect(await status(b.api_key)).toBe(401);
    expect((await t.call('GET', `/agent/identities/${agent.uid}/api-keys`)).json().api_keys).toEqual([]);
  });

  it('are hidden from other teams and agents, and refused past their own rules without writing', async () => {
    const agent = (await t.call('POST', '/agent/identities', { name: 'Private' })).json();
    const key = (await t.call('POST', `/agent/identities/${agent.uid}/api-keys`)).json();
    const outsider = (await t.addMember(await newTeam('Other'), { email: 'out@example.com' })).api_key;
    const keys = `/agent/identities/${agent.uid}/api-keys`;
    expectProblem(await t.call('GET', keys, undefined, outsider), 404);
    await expectRefused(t, () => t.call('DELETE', `${keys}/${key.key_id}`, undefined, outsider), 404);
    await expectRefused(t, () => t.call('POST', keys, {}, outsider), 404);
    expectProblem(await t.call('GET', keys, undefined, key.api_key), 403);
    await expectRefused(t, () => t.call('DELETE', `${keys}/${key.key_id}`, undefined, key.api_key), 403);
    await expectRefused(t, () => t.call('DELETE', `${keys}/no-such-key`), 404);
    await expectRefused(t, () => t.call('POST', keys, { expires_at: '2020-01-01T00:00:00Z' }), 400);
    expectProblem(await t.call('GET', '/agent/identities/nope/api-keys'), 404);
  });
});

describe('removing members', () => {
  it('takes the team from their keys at once; what they made stays', async () => {
    const team = await newTeam('Removals');
    const { user, api_key: key } = await t.addMember(team, { email: 'gone@example.com' });
    const run = await t.call('POST', '/agent/runs', { prompt: 'leave a trace' }, key, { 'x-service-team-uid': team });
    expect(run.statusCode, run.body).toBe(200);
    const runId = run.json().run_id;

    const members = (await t.call('GET', `/teams/${team}/members`)).json().members;
    expect(members).toEqual([
      expect.objectContaining({ user: expect.objectContaining({ uid: t.adminUid }), role: 'admin' }),
      {
        user: { uid: user.uid, email: 'gone@example.com', display_name: 'gone' },
        role: 'member',
        joined_at: expect.any(String),
        added_by: { type: 'user', uid: t.adminUid },
      },
    ]);

    const res = await t.call('DELETE', `/teams/${team}/members/${user.uid}`);
    expect(res.statusCode, res.body).toBe(204);
    // The next request: the team is refused by name, and the user now belongs to no team.
    expectProblem(await t.call('GET', '/factory', undefined, key, { 'x-service-team-uid': team }), 403);
    expectProblem(await t.call('GET', '/factory', undefined, key), 403);
    expect((await t.call('GET', '/teams', undefined, key)).json().teams).toEqual([]);
    expect(
      (await t.call('GET', `/agent/runs/${runId}`, undefined, ADMIN_KEY, { 'x-service-team-uid': team })).statusCode,
    ).toBe(200);
    expectProblem(await t.call('GET', `/agent/runs/${runId}`, undefined, key), 404);
    expect((await t.call('GET', `/teams/${team}/members`)).json().members).toHaveLength(1);
    // Added again, the same key opens the team again.
    await t.call('POST', `/teams/${team}/members`, { email: 'gone@example.com' });
    expect(await status(key, '/factory', team)).toBe(200);
  });

  it('keeps the other teams of a removed member', async () => {
    const a = await newTeam('Keep A');
    const b = await newTeam('Keep B');
    const { user, api_key: key } = await t.addMember(a, { email: 'both@example.com' });
    await t.call('POST', `/teams/${b}/members`, { email: 'both@example.com' });
    await t.call('DELETE', `/teams/${a}/members/${user.uid}`);
    expect(await status(key, '/factory', a)).toBe(403);
    expect(await status(key, '/factory', b)).toBe(200);
    expect(await status(key, '/factory')).toBe(200);
  });

  it('is for admins; a member may only leave; the last admin cannot go; nothing is written when refused', async () => {
    const team = await newTeam('Rules');
    const one = await t.addMember(team, { email: 'one@example.com' });
    const two = await t.addMember(team, { email: 'two@example.com' });
    const remove =
      (uid: string, key = ADMIN_KEY) =>
      () =>
        t.call('DELETE', `/teams/${team}/members/${uid}`, undefined, key);
    await expectRefused(t, remove(two.user.uid, one.api_key), 403, 'not_authorized');
    await expectRefused(t, remove(t.adminUid, one.api_key), 403);
    await expectRefused(t, remove(t.adminUid), 409, 'last_admin');
    await expectRefused(t, remove('no-such-user'), 404);
    await expectRefused(t, () => t.call('DELETE', `/teams/no-such-team/members/${one.user.uid}`), 404);
    const outsider = (await t.addMember(await newTeam('Outside'), { email: 'stranger@example.com' })).api_key;
    await expectRefused(t, remove(one.user.uid, outsider), 404);
    expectProblem(await t.call('GET', `/teams/${team}/members`, undefined, outsider), 404);
    // Leaving.
    expect((await remove(one.user.uid, one.api_key)()).statusCode).toBe(204);
    expect(await status(one.api_key, '/factory', team)).toBe(403);
    // With a second admin, the first may go (here: leave), and then the second is the last.
    await t.call('POST', `/teams/${team}/members`, { email: 'boss@example.com', role: 'admin' });
    const members = (await t.call('GET', `/teams/${team}/members`)).json().members;
    const boss = members.find((m: { user: { email: string } }) => m.user.email === 'boss@example.com').user.uid;
    expect((await remove(t.adminUid)()).statusCode).toBe(204);
    expectProblem(await t.call('GET', `/teams/${team}/members`), 404);
    expect(boss).toEqual(expect.any(String));
  });

  it('lists members a page at a time', async () => {
    const team = await newTeam('Paged');
    for (const n of [1, 2, 3]) await t.call('POST', `/teams/${team}/members`, { email: `p${n}@example.com` });
    const all = (await t.call('GET', `/teams/${team}/members`)).json().members;
    const emails = all.map((m: { user: { email: string } }) => m.user.email);
    expect(emails).toEqual(['admin@example.com', 'p1@example.com', 'p2@example.com', 'p3@example.com']);
    const first = (await t.call('GET', `/teams/${team}/members?limit=2`)).json();
    expect(first.page_info.has_next_page).toBe(true);
    const rest = (await t.call('GET', `/teams/${team}/members?limit=2&cursor=${first.page_info.next_cursor}`)).json();
    expect([...first.members, ...rest.members]).toEqual(all);
    expect(rest.page_info).toEqual({ has_next_page: false, next_cursor: null });
    expectProblem(await t.call('GET', `/teams/${team}/members?cursor=bogus`), 400, 'invalid_cursor');
  });
});

describe("a team's audit", () => {
  it('lists every grant and revocation with its actor, time and request, for admins only', async () => {
    const team = await newTeam('Audited');
    const { user, api_key: key } = await t.addMember(team, { email: 'aud@example.com' });
    const laptop = (await t.call('POST', '/me/api-keys', { label: 'laptop' }, key)).json();
    await t.call('DELETE', `/me/api-keys/${laptop.key_id}`, undefined, key);
    const agent = (
      await t.call('POST', '/agent/identities', { name: 'Bot' }, ADMIN_KEY, { 'x-service-team-uid': team })
    ).json();
    const agentKey = (await t.call('POST', `/agent/identities/${agent.uid}/api-keys`, { label: 'w' })).json();
    await t.call('DELETE', `/agent/identities/${agent.uid}`);
    await t.call('DELETE', `/teams/${team}/members/${user.uid}`, undefined, ADMIN_KEY, { 'x-request-id': 'audit-r1' });
    // Keys made after the member left do not concern the team.
    await t.call('POST', '/me/api-keys', { label: 'later' }, key);

    const audit = await t.call('GET', `/teams/${team}/audit`);
    expect(audit.statusCode, audit.body).toBe(200);
    const entries = audit.json().entries;
    const admin = { type: 'user', uid: t.adminUid };
    const member = { type: 'user', uid: user.uid };
    const at = clock.now().toISOString();
    expect(entries.map((e: { type: string; actor: unknown; data: unknown }) => [e.type, e.actor, e.data])).toEqual([
      ['TeamCreated', admin, { uid: team, name: 'Audited' }],
      ['MemberAdded', admin, { team_uid: team, user_uid: t.adminUid, role: 'admin' }],
      ['InvitationIssued', admin, { uid: user.uid, team_uid: team }],
      ['MemberAdded', admin, { team_uid: team, user_uid: user.uid, role: 'member' }],
      ['ApiKeyIssued', member, expect.objectContaining({ label: 'invitation', principal: member })],
      [
        'ApiKeyIssued',
        member,
        { key_id: laptop.key_id, principal: member, label: 'laptop', last4: laptop.last4, expires_at: null },
      ],
      ['ApiKeyRevoked', member, { key_id: laptop.key_id, principal: member }],
      ['AgentIdentityCreated', admin, expect.objectContaining({ uid: agent.uid, team_uid: team, name: 'Bot' })],
      [
        'ApiKeyIssued',
        admin,
        expect.objectContaining({ key_id: agentKey.key_id, principal: { type: 'agent', uid: agent.uid } }),
      ],
      ['AgentIdentityDeleted', admin, { uid: agent.uid, revoked_key_ids: [agentKey.key_id] }],
      ['MemberRemoved', admin, { team_uid: team, user_uid: user.uid, role: 'member' }],
    ]);
    const last = entries.at(-1);
    expect(last).toMatchObject({
      occurred_at: at,
      stream: `team-${team}`,
      request_id: 'audit-r1',
      id: expect.any(String),
    });
    expect(audit.body).not.toMatch(/key_hash|invitation_hash/);
    expect(audit.body).not.toContain(hashApiKey(laptop.api_key));

    // Paged by log position.
    const page = (await t.call('GET', `/teams/${team}/audit?limit=4`)).json();
    const next = (await t.call('GET', `/teams/${team}/audit?limit=100&cursor=${page.page_info.next_cursor}`)).json();
    expect([...page.entries, ...next.entries]).toEqual(entries);
    expectProblem(await t.call('GET', `/teams/${team}/audit?cursor=bogus`), 400, 'invalid_cursor');
  });

  it('is printed by `shopfloor history team`, and a user account by `shopfloor history user`', async () => {
    const team = await newTeam('Printed');
    const { user, api_key: key } = await t.addMember(team, { email: 'printed@example.com' });
    const ci = (await t.call('POST', '/me/api-keys', { label: 'ci' }, key)).json();
    await t.call('DELETE', `/me/api-keys/${ci.key_id}`, undefined, key);
    const print = async (kind: string, id: string) => {
      const lines: string[] = [];
      const code = await history(t.rt, [kind, id], (line) => lines.push(line));
      return { code, entries: lines.map((l) => JSON.parse(l)) };
    };
    const api = (await t.call('GET', `/teams/${team}/audit`)).json().entries;
    expect(await print('team', team)).toEqual({ code: 0, entries: api });
    const own = await print('user', user.uid);
    expect(own.code).toBe(0);
    expect(own.entries.map((e: { type: string }) => e.type)).toEqual([
      'UserRegistered',
      'InvitationIssued',
      'InvitationRedeemed',
      'ApiKeyIssued',
      'ApiKeyIssued',
      'ApiKeyRevoked',
    ]);
    expect(own.entries.at(-1)).toMatchObject({ actor: { type: 'user', uid: user.uid }, data: { key_id: ci.key_id } });
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect((await print('team', 'no-such-team')).code).toBe(1);
      expect((await print('user', 'no-such-user')).code).toBe(1);
    } finally {
      quiet.mockRestore();
    }
  });

  it('is refused to members (403) and hidden from others (404)', async () => {
    const team = await newTeam('Closed');
    const { api_key: key } = await t.addMember(team, { email: 'peek@example.com' });
    expectProblem(await t.call('GET', `/teams/${team}/audit`, undefined, key), 403);
    const outsider = (await t.addMember(await newTeam('Far'), { email: 'far@example.com' })).api_key;
    expectProblem(await t.call('GET', `/teams/${team}/audit`, undefined, outsider), 404);
    expectProblem(await t.call('GET', '/teams/no-such-team/audit'), 404);
  });
});

describe('two server processes on one store', () => {
  it('honour a revocation and a removal made by the other as soon as their projector applies it', async () => {
    const other = await startTestApp({ DATA_DIR: t.dir }, clock);
    try {
      const team = await newTeam('Shared');
      const { user, api_key: key } = await t.addMember(team, { email: 'shared@example.com' });
      const spare = (await t.call('POST', '/me/api-keys', { label: 'spare' }, key)).json();
      const synced = async () => other.rt.projector.waitFor(await t.rt.events.headPosition());
      await synced();
      // The other process has looked both keys up, and keeps the answers.
      expect(
        await other.call('GET', '/factory', undefined, spare.api_key, { 'x-service-team-uid': team }),
      ).toMatchObject({ statusCode: 200 });
      expect((await other.call('GET', '/factory', undefined, key, { 'x-service-team-uid': team })).statusCode).toBe(
        200,
      );

      await t.call('DELETE', `/me/api-keys/${spare.key_id}`, undefined, key);
      await synced();
      expect((await other.call('GET', '/teams', undefined, spare.api_key)).statusCode).toBe(401);
      expect((await other.call('GET', '/teams', undefined, key)).statusCode).toBe(200);

      await t.call('DELETE', `/teams/${team}/members/${user.uid}`);
      await synced();
      expect((await other.call('GET', '/factory', undefined, key, { 'x-service-team-uid': team })).statusCode).toBe(
        403,
      );
    } finally {
      await other.close({ keepData: true });
    }
  });
});
