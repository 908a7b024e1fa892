import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, expectProblem, expectRefused, startTestApp, type TestApp } from '../helpers/app.js';

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

  it('adds a member with a key shown once, which opens only that team', async () => {
    const added = await t.call('POST', `/teams/${t.teamUid}/members`, {
      email: 'Dana@Example.com',
      display_name: 'Dana',
    });
    expect(added.statusCode, added.body).toBe(201);
    const body = added.json();
    expect(body).toMatchObject({
      user: { email: 'dana@example.com', display_name: 'Dana' },
      role: 'member',
      api_key: expect.stringMatching(/^sf_/),
    });
    const teams = (await t.call('GET', '/teams', undefined, body.api_key)).json().teams;
    expect(teams.map((team: { uid: string }) => team.uid)).toEqual([t.teamUid]);
    // A member is not an admin: adding people is refused, and nothing is written.
    await expectRefused(
      t,
      () => t.call('POST', `/teams/${t.teamUid}/members`, { email: 'eve@example.com' }, body.api_key),
      403,
    );
  });

  it('never hands out a key for a user who already exists', async () => {
    const other = (await t.call('POST', '/teams', { name: 'Second' })).json();
    const first = (await t.call('POST', `/teams/${other.uid}/members`, { email: 'sam@example.com' })).json();
    expect(first.api_key).toEqual(expect.any(String));
    const third = (await t.call('POST', '/teams', { name: 'Third' })).json();
    const again = await t.call('POST', `/teams/${third.uid}/members`, { email: 'SAM@example.com', role: 'admin' });
    expect(again.statusCode).toBe(201);
    expect(again.json()).toMatchObject({ user: { uid: first.user.uid }, role: 'admin', api_key: null });
    const teams = (await t.call('GET', '/teams', undefined, first.api_key)).json().teams;
    expect(teams.map((team: { uid: string }) => team.uid)).toEqual([other.uid, third.uid]);
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
    const { bootstrap } = await import('../../commands/team/bootstrap.js');
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
    const { START } = await import('../../src/eventstore/port.js');
    const fresh = await startTestApp();
    try {
      // Simulate a first start that died right after claiming the store.
      const dir = fresh.dir;
      await fresh.close();
      const { openSqliteEventStore } = await import('../../src/eventstore/sqlite.js');
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
