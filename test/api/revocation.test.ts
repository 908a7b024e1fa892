/**
 * Taking access away from requests in flight (src/http/access.ts): a claim long poll hands out
 * nothing once its key no longer opens its agent, and ends as soon as its process learns of it; a
 * request held open (played by a probe route, as an event stream will be) ends with the 401 or 403
 * its next request would get: key revoked or expired, member removed from the team it acts for.
 */
import { v4 as uuidv4 } from 'uuid';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runningWorkers } from '../../commands/worker/presence.js';
import { manualClock } from '../../src/clock.js';
import { feature } from '../../src/feature.js';
import { watchAdmission } from '../../src/http/auth.js';
import { expectProblem, startTestApp, type TestApp } from '../helpers/app.js';

/** Holds a request open until its admission lapses (answering why) or `seconds` pass (200). */
let heldOpen = 0;
const probe = feature({
  name: 'held-open-probe',
  routes: [
    (api) => {
      const schema = {
        querystring: z.object({ seconds: z.coerce.number().int().min(1).max(60) }),
        response: { 200: z.object({ held: z.literal(true) }) },
      };
      api.get('/probe/held-open', { schema }, async (req) => {
        const watch = watchAdmission(req);
        heldOpen++;
        try {
          await delay(req.query.seconds * 1000, undefined, { signal: watch.signal }).catch(() => {
            throw watch.signal.reason;
          });
          return { held: true as const };
        } finally {
          watch.stop();
        }
      });
    },
  ],
});

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, undefined, [probe]);
});
afterAll(() => t.close());

/** A team of its own (no queued runs of other tests), with an agent and the agent's key. */
async function teamWithAgent(app: TestApp, keyBody?: unknown) {
  const team = (await app.call('POST', '/teams', { name: `Team ${uuidv4()}` })).json().uid as string;
  const inTeam = { 'x-service-team-uid': team };
  const agent = (await app.call('POST', '/agent/identities', { name: 'Runner' }, undefined, inTeam)).json();
  const key = await app.call('POST', `/agent/identities/${agent.uid}/api-keys`, keyBody, undefined, inTeam);
  expect(key.statusCode, key.body).toBe(201);
  const { api_key, key_id } = key.json();
  const worker = await app.call('POST', '/agent/workers', { host: 'box' }, api_key);
  expect(worker.statusCode, worker.body).toBe(201);
  return {
    team,
    inTeam,
    agent: agent.uid as string,
    key: api_key as string,
    keyId: key_id as string,
    worker: worker.json().worker_id as string,
  };
}

type Team = Awaited<ReturnType<typeof teamWithAgent>>;

const claim = (app: TestApp, x: Team, key = x.key) =>
  app.call('POST', `/agent/workers/${x.worker}/claim?wait_seconds=30`, undefined, key);

/** Claims of the team waiting for a queued run in this process. */
const waitingClaims = (app: TestApp, team: string) =>
  // biome-ignore lint/complexity/useLiteralKeys: private, read only here: nothing else tells that a long poll waits.
  runningWorkers(app.rt)!.registry['queues'].get(team)?.waiters.size ?? 0;

async function createRun(app: TestApp, x: Team) {
  const res = await app.call('POST', '/agent/runs', { prompt: 'after the revocation' }, undefined, x.inTeam);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().run_id as string;
}

const stateOf = async (app: TestApp, x: Team, runId: string) =>
  (await app.call('GET', `/agent/runs/${runId}`, undefined, undefined, x.inTeam)).json().state;

/** The run is still queued, and a worker whose key works is handed it. */
async function expectStillQueued(app: TestApp, x: Team, runId: string) {
  expect(await stateOf(app, x, runId)).toBe('QUEUED');
  const agent = (await app.call('POST', '/agent/identities', { name: 'Other' }, undefined, x.inTeam)).json();
  const key = (
    await app.call('POST', `/agent/identities/${agent.uid}/api-keys`, undefined, undefined, x.inTeam)
  ).json();
  const worker = (await app.call('POST', '/agent/workers', { host: 'other' }, key.api_key)).json().worker_id;
  const res = await app.call('POST', `/agent/workers/${worker}/claim`, undefined, key.api_key);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().run.run_id).toBe(runId);
}

describe('a claim long poll', () => {
  const takeAway = {
    'its key is revoked': (x: Team) =>
      t.call('DELETE', `/agent/identities/${x.agent}/api-keys/${x.keyId}`, undefined, undefined, x.inTeam),
    'its agent is deleted': (x: Team) =>
      t.call('DELETE', `/agent/identities/${x.agent}`, undefined, undefined, x.inTeam),
  };
  for (const [when, how] of Object.entries(takeAway)) {
    it(`waiting when ${when}: answers 401 and leases nothing queued after`, async () => {
      const x = await teamWithAgent(t);
      const waiting = claim(t, x);
      await expect.poll(() => waitingClaims(t, x.team)).toBe(1);
      expect((await how(x)).statusCode).toBe(204);
      const runId = await createRun(t, x);
      expectProblem(await waiting, 401);
      await expectStillQueued(t, x, runId);
    });
  }

  it('ends with 401 as soon as its key is revoked, with nothing queued', async () => {
    const x = await teamWithAgent(t);
    const waiting = claim(t, x);
    await expect.poll(() => waitingClaims(t, x.team)).toBe(1);
    await takeAway['its key is revoked'](x);
    // Within its 30 s: the poll was told, not merely checked when it next hands something out.
    expectProblem(await waiting, 401);
    expect(waitingClaims(t, x.team)).toBe(0);
  });

  it('re-checks the key before handing out a run: one that expired while it waited gets nothing', async () => {
    const clock = manualClock(new Date());
    const m = await startTestApp({}, clock);
    try {
      const expires_at = new Date(clock.now().getTime() + 60_000).toISOString();
      const x = await teamWithAgent(m, { expires_at });
      const waiting = claim(m, x);
      await expect.poll(() => waitingClaims(m, x.team)).toBe(1);
      // Expired by the server's clock; no timer of the watch is due, so only the re-check can tell.
      clock.advance(61_000);
      const runId = await createRun(m, x);
      expectProblem(await waiting, 401);
      await expectStillQueued(m, x, runId);
    } finally {
      await m.close();
    }
  });
});

describe('a request held open', () => {
  const hold = (key: string, team: string) =>
    t.call('GET', '/probe/held-open?seconds=30', undefined, key, { 'x-service-team-uid': team });

  it('ends with 403 when its member is removed from the team it acts for, and 401 when its key is revoked', async () => {
    const teams = [];
    for (const name of ['Kept', 'Left']) teams.push((await t.call('POST', '/teams', { name })).json().uid as string);
    const [kept, left] = teams as [string, string];
    const member = await t.addMember(left, { email: `held-${uuidv4()}@example.com` });
    expect((await t.call('POST', `/teams/${kept}/members`, { email: member.user.email })).statusCode).toBe(201);
    const before = heldOpen;
    const inKept = hold(member.api_key, kept);
    const inLeft = hold(member.api_key, left);
    await expect.poll(() => heldOpen).toBe(before + 2);

    expect((await t.call('DELETE', `/teams/${left}/members/${member.user.uid}`)).statusCode).toBe(204);
    expectProblem(await inLeft, 403);
    // Still a member of the other team: that request stays open until the key itself goes.
    const keys = (await t.call('GET', '/me/api-keys', undefined, member.api_key)).json().api_keys;
    const second = await t.call('POST', '/me/api-keys', {}, member.api_key);
    expect(second.statusCode, second.body).toBe(201);
    expect((await t.call('DELETE', `/me/api-keys/${keys[0].key_id}`, undefined, member.api_key)).statusCode).toBe(204);
    expectProblem(await inKept, 401);
  });

  it('ends with 401 when its key expires', async () => {
    const member = await t.addMember(t.teamUid, { email: `expiring-${uuidv4()}@example.com` });
    const expires_at = new Date(Date.now() + 1500).toISOString();
    const expiring = await t.call('POST', '/me/api-keys', { expires_at }, member.api_key);
    expect(expiring.statusCode, expiring.body).toBe(201);
    // 401 rather than the 200 its 30 s would end with.
    expectProblem(await hold(expiring.json().api_key, t.teamUid), 401);
  });
});
