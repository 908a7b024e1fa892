import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
let factoryUid: string;
beforeAll(async () => {
  t = await startTestApp();
  factoryUid = (await t.call('POST', '/factory', { name: 'Builds' })).json().uid;
});
afterAll(() => t.close());

describe('agent identities', () => {
  it('creates a foreman for a factory, lists it by factory, and keys it', async () => {
    const res = await t.call('POST', '/agent/identities', {
      name: 'Fore',
      agent_type: 'FOREMAN',
      factory_uid: factoryUid,
      skills: ['acme/x:SKILL.md'],
    });
    expect(res.statusCode, res.body).toBe(201);
    const agent = res.json();
    expect(agent).toMatchObject({
      name: 'Fore',
      agent_type: 'FOREMAN',
      factory_uid: factoryUid,
      team_uid: t.teamUid,
      available: true,
      skills: ['acme/x:SKILL.md'],
      secrets: [],
    });
    expect((await t.call('GET', `/factory/${factoryUid}`)).json().foreman_agent_uid).toBe(agent.uid);
    expect(
      (await t.call('GET', `/agent/identities?factory_uid=${factoryUid}`))
        .json()
        .agents.map((a: { uid: string }) => a.uid),
    ).toEqual([agent.uid]);
    expect((await t.call('GET', '/agent/identities?factory_uid=other')).json().agents).toEqual([]);

    const key = await t.call('POST', `/agent/identities/${agent.uid}/api-keys`);
    expect(key.statusCode).toBe(201);
    const agentKey = key.json().api_key;
    // The agent acts for its own team and cannot manage agents.
    expect((await t.call('GET', `/factory/${factoryUid}`, undefined, agentKey)).statusCode).toBe(200);
    await expectRefused(t, () => t.call('POST', '/agent/identities', { name: 'Nope' }, agentKey), 403);
  });

  it('updates partially: null keeps a field, empty clears it', async () => {
    const agent = (
      await t.call('POST', '/agent/identities', { name: 'Rev', description: 'reviews', base_model: 'gpt' })
    ).json();
    const res = await t.call('PUT', `/agent/identities/${agent.uid}`, {
      description: null,
      base_model: '',
      prompt: 'Be brief',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Rev', description: 'reviews', base_model: null, prompt: 'Be brief' });
    expect((await t.call('GET', `/agent/identities/${agent.uid}`)).json()).toEqual(res.json());
  });

  it('deletes an agent and all of its keys at once', async () => {
    const agent = (await t.call('POST', '/agent/identities', { name: 'Temp' })).json();
    const keys = [];
    for (let i = 0; i < 3; i++)
      keys.push((await t.call('POST', `/agent/identities/${agent.uid}/api-keys`)).json().api_key);
    for (const key of keys) expect((await t.call('GET', '/teams', undefined, key)).statusCode).toBe(200);
    expect((await t.call('DELETE', `/agent/identities/${agent.uid}`)).statusCode).toBe(204);
    for (const key of keys) expectProblem(await t.call('GET', '/teams', undefined, key), 401);
    expectProblem(await t.call('GET', `/agent/identities/${agent.uid}`), 404);
    await expectRefused(t, () => t.call('POST', `/agent/identities/${agent.uid}/api-keys`), 404);
    await expectRefused(t, () => t.call('DELETE', `/agent/identities/${agent.uid}`), 404);
  });

  it('refuses invalid bodies and foreign factories without writing', async () => {
    await expectRefused(t, () => t.call('POST', '/agent/identities', { agent_type: 'CUSTOM' }), 400);
    await expectRefused(t, () => t.call('POST', '/agent/identities', { name: 'x', agent_type: 'BOSS' }), 400);
    await expectRefused(t, () => t.call('POST', '/agent/identities', { name: 'x', environment_id: 'short' }), 400);
    await expectRefused(
      t,
      () => t.call('POST', '/agent/identities', { name: 'x', factory_uid: 'no-such-factory' }),
      400,
    );
    await expectRefused(t, () => t.call('PUT', '/agent/identities/nope', { name: 'y' }), 404);
  });

  it('hides agents of other teams', async () => {
    const agent = (await t.call('POST', '/agent/identities', { name: 'Mine' })).json();
    const other = (await t.call('POST', '/teams', { name: 'Elsewhere' })).json();
    const outsider = (await t.addMember(other.uid, { email: 'o@example.com' })).api_key;
    await expectRefused(t, () => t.call('GET', `/agent/identities/${agent.uid}`, undefined, outsider), 404);
    await expectRefused(t, () => t.call('DELETE', `/agent/identities/${agent.uid}`, undefined, outsider), 404);
    expect((await t.call('GET', '/agent/identities', undefined, outsider)).json().agents).toEqual([]);
  });
});

describe('egress ranges', () => {
  it('are the configured ranges in canonical form', async () => {
    const app = await (await import('../../helpers/app.js')).startTestApp({
      EGRESS_RANGES: '10.1.2.3/8, 192.168.1.7,2001:DB8::1/64',
    });
    try {
      expect((await app.call('GET', '/networking/egress-ranges')).json()).toEqual({
        ranges: ['10.0.0.0/8', '192.168.1.7/32', '2001:db8::/64'],
      });
    } finally {
      await app.close();
    }
  });
});
