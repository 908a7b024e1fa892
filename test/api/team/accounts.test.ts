import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('teams and members', () => {
  it('bootstraps one team whose admin is the bootstrap key', async () => {
    const res = await t.call('GET', '/teams');
    expect(res.json()).toEqual({
      teams: [expect.objectContaining({ uid: t.teamUid, name: 'Default team', role: 'admin' })],
    });
  });

  it('makes the creator of a team its admin', async () => {
    const res = await t.call('POST', '/teams', { name: 'Platform' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ uid: expect.any(String), name: 'Platform' });
    const teams = (await t.call('GET', '/teams')).json().teams;
    expect(teams.find((team: { uid: string }) => team.uid === res.json().uid)).toMatchObject({ role: 'admin' });
  });

  it('adds a member with no key but an invitation, redeemed once by the member for a key that opens only that team', async () => {
    const added = await t.call('POST', `/teams/${t.teamUid}/members`, {
      email: 'Dana@Example.com',
      display_name: 'Dana',
    });
    expect(added.statusCode, added.body).toBe(201);
    const body = added.json();
    expect(body).toEqual({
      user: { uid: expect.any(String), email: 'dana@example.com', display_name: 'Dana' },
      role: 'member',
      api_key: null,
      invitation_code: expect.stringMatching(/^sfinv_/),
    });
    // The code is shown once: the log holds its hash only.
    const events = await t.rt.events.readAll({ commit: -1n, prepare: -1n }, 10_000);
    expect(JSON.stringify(events.map((e) => [e.data, e.metadata]))).not.toContain(body.invitation_code);

    const redeemed = await t.call('POST', '/invitations/redeem', { code: body.invitation_code }, null);
    expect(redeemed.statusCode, redeemed.body).toBe(201);
    expect(redeemed.json()).toEqual({ user: body.user, api_key: expect.stringMatching(/^sf_/) });
    const key = redeemed.json().api_key;
    const teams = (await t.call('GET', '/teams', undefined, key)).json().teams;
    expect(teams.map((team: { uid: string }) => team.uid)).toEqual([t.teamUid]);
    // Once only.
    await expectRefused(
      t,
      () => t.call('POST', '/invitations/redeem', { code: body.invitation_code }, null),
      404,
      'resource_not_found',
    );
    // A member is not an admin: adding people is refused, and nothing is written.
    await expectRefused(t, () => t.call('POST', `/teams/${t.teamUid}/members`, { email: 'eve@example.com' }, key), 403);
  });

  it('answers alike for an address that has an account elsewhere and a new one, and never opens the account', async () => {
    const other = (await t.call('POST', '/teams', { name: 'Second' })).json();
    const sam = await t.addMember(other.uid, { email: 'sam@example.com' });
    const third = (await t.call('POST', '/teams', { name: 'Third' })).json();
    const again = await t.call('POST', `/teams/${third.uid}/members`, { email: 'SAM@example.com', role: 'admin' });
    const fresh = await t.call('POST', `/teams/${third.uid}/members`, { email: 'newcomer@example.com', role: 'admin' });
    expect([again.statusCode, fresh.statusCode]).toEqual([201, 201]);
    // The same fields, no key either way, codes of one form; uids are random, not time-ordered.
    const code = /^sfinv_[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/;
    expect(again.json()).toEqual({
      user: { uid: sam.user.uid, email: 'sam@example.com', display_name: 'sam' },
      role: 'admin',
      api_key: null,
      invitation_code: expect.stringMatching(code),
    });
    expect(fresh.json()).toEqual({
      user: { uid: expect.any(String), email: 'newcomer@example.com', display_name: 'newcomer' },
      role: 'admin',
      api_key: null,
      invitation_code: expect.stringMatching(code),
    });
    expect(sam.user.uid[14]).toBe('4');
    expect(fresh.json().user.uid[14]).toBe('4');

    // The existing account's invitation opens nothing, and is refused like any spent or unknown code.
    const refusal = (code: string) => t.call('POST', '/invitations/redeem', { code }, null);
    const existing = await expectRefused(t, () => refusal(again.json().invitation_code), 404);
    const unknown = await expectRefused(t, () => refusal(`sfinv_${sam.user.uid}.${'A'.repeat(43)}`), 404);
    expect({ ...existing, instance: null }).toEqual({ ...unknown, instance: null });
    expect((await refusal(fresh.json().invitation_code)).statusCode).toBe(201);
    // The existing user's own key now opens both teams.
    const teams = (await t.call('GET', '/teams', undefined, sam.api_key)).json().teams;
    expect(teams.map((team: { uid: string }) => team.uid)).toEqual([other.uid, third.uid]);
  });

  it('gives no key to an account invited by a second team before its first key: it would open both', async () => {
    const a = (await t.call('POST', '/teams', { name: 'A' })).json();
    const b = (await t.call('POST', '/teams', { name: 'B' })).json();
    const fromA = (await t.call('POST', `/teams/${a.uid}/members`, { email: 'pending@example.com' })).json();
    const fromB = (await t.call('POST', `/teams/${b.uid}/members`, { email: 'pending@example.com' })).json();
    for (const code of [fromA.invitation_code, fromB.invitation_code])
      await expectRefused(t, () => t.call('POST', '/invitations/redeem', { code }, null), 404);
  });

  it('refuses malformed redemptions without writing', async () => {
    await expectRefused(t, () => t.call('POST', '/invitations/redeem', {}, null), 400);
    await expectRefused(t, () => t.call('POST', '/invitations/redeem', { code: 'sf_not_an_invitation' }, null), 404);
    await expectRefused(
      t,
      () => t.call('POST', '/invitations/redeem', { code: `sfinv_${'0'.repeat(36)}.${'A'.repeat(43)}` }, null),
      404,
    );
  });

  it('refuses a second membership, bad bodies and unknown teams without writing', async () => {
    await t.call('POST', `/teams/${t.teamUid}/members`, { email: 'once@example.com' });
    await expectRefused(
      t,
      () => t.call('POST', `/teams/${t.teamUid}/members`, { email: 'once@example.com' }),
      409,
      'already_member',
    );
    await expectRefused(t, () => t.call('POST', `/teams/${t.teamUid}/members`, { email: 'not-an-email' }), 400);
    await expectRefused(
      t,
      () => t.call('POST', `/teams/${t.teamUid}/members`, { email: 'a@b.co', role: 'owner' }),
      400,
    );
    await expectRefused(t, () => t.call('POST', '/teams/nope/members', { email: 'new@example.com' }), 404);
    await expectRefused(t, () => t.call('POST', '/teams', { name: '   ' }), 400);
    await expectRefused(t, () => t.call('POST', '/teams', {}), 400);
  });
});

describe('bootstrap', () => {
  it('happens once: a second bootstrap of the same store does nothing', async () => {
    const { bootstrap } = await import('../../../commands/team/bootstrap.js');
    const before = await t.head();
    expect(await bootstrap(t.rt)).toBeNull();
    expect(await t.head()).toBe(before);
    expect((await t.call('GET', '/teams', undefined, ADMIN_KEY)).statusCode).toBe(200);
  });

  it('generates and prints nothing into the event data but a hash', async () => {
    const events = await t.rt.events.readAll({ commit: -1n, prepare: -1n }, 10_000);
    expect(JSON.stringify(events.map((e) => e.data))).not.toContain(ADMIN_KEY);
  });
});

describe('unknown team header', () => {
  it('is refused with 403 for reads too', async () => {
    expectProblem(
      await t.call('GET', '/factory', undefined, ADMIN_KEY, { 'x-service-team-uid': 'ghost' }),
      403,
      'not_authorized',
    );
  });
});

describe('an interrupted bootstrap', () => {
  it('is finished by the next start, which shows a working key', async () => {
    const { START } = await import('../../../src/eventstore/port.js');
    const fresh = await startTestApp();
    try {
      // Simulate a first start that died right after claiming the store.
      const dir = fresh.dir;
      await fresh.close();
      const { openSqliteEventStore } = await import('../../../src/eventstore/sqlite.js');
      const fs = await import('node:fs');
      fs.mkdirSync(dir, { recursive: true });
      const events = openSqliteEventStore(`${dir}/events.db`);
      await events.append(
        'bootstrap',
        [
          {
            id: 'c1',
            type: 'BootstrapClaimed',
            data: { team_uid: 'team-x', user_uid: 'user-x' },
            metadata: {
              actor: { type: 'system', uid: 'bootstrap' },
              team_uid: null,
              correlation_id: 'c',
              causation_id: null,
              request_id: null,
              occurred_at: new Date().toISOString(),
            },
          },
        ],
        'no_stream',
      );
      await events.close();
      const restarted = await startTestApp({ DATA_DIR: dir, BOOTSTRAP_API_KEY: '' });
      try {
        const all = await restarted.rt.events.readAll(START, 100);
        expect(all.map((e) => e.type)).toEqual([
          'BootstrapClaimed',
          'TeamCreated',
          'MemberAdded',
          'EmailReserved',
          'UserRegistered',
          'ApiKeyIssued',
          // The model catalogue in force, recorded at the first start.
          'ModelCatalogueChanged',
        ]);
        expect(restarted.teamUid).toBe('team-x');
        expect(restarted.generatedKey).toMatch(/^sf_/);
        const teams = await restarted.call('GET', '/teams', undefined, restarted.generatedKey!);
        expect(teams.json().teams).toEqual([expect.objectContaining({ uid: 'team-x', role: 'admin' })]);
      } finally {
        await restarted.close();
      }
    } finally {
      await fresh.close().catch(() => {});
    }
  });
});
