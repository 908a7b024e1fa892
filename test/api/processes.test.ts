/**
 * Several processes on one store, played by two apps on one data directory (each with its own
 * connections, projector, leases and registry): one owns the projector and the reactors, the other
 * follows; commands answered by either read their own writes on both; the webhook budgets are
 * counted once; and a worker's calls may reach either process.
 *
 * The apps share this process's event loop, and a store sees another connection's commits from its
 * next turn of the loop (src/sqlite-snapshot.ts): every request here starts in a turn of its own,
 * as one arriving over HTTP does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startTestApp, type TestApp } from '../helpers/app.js';
import {
  deliveryLog,
  type Hook,
  makeHook,
  post as postNow,
  postToken as postTokenNow,
} from './webhook/ingress-helpers.js';

let a: TestApp;
let b: TestApp;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
/** `t`, its requests each in a turn of its own. */
function arriving(t: TestApp): TestApp {
  const call = t.call;
  t.call = async (...args) => {
    await nextTurn();
    return call(...args);
  };
  return t;
}
const post: typeof postNow = async (...args) => (await nextTurn(), postNow(...args));
const postToken: typeof postTokenNow = async (...args) => (await nextTurn(), postTokenNow(...args));

beforeAll(async () => {
  a = arriving(await startTestApp());
  b = arriving(await startTestApp({ DATA_DIR: a.dir }));
});
afterAll(async () => {
  await b?.close({ keepData: true });
  await a?.close();
});

describe('one owner, the others follow', () => {
  it('runs the projector and the reactors in the first process only; both are ready', async () => {
    expect([a.rt.projector.isOwner, b.rt.projector.isOwner]).toEqual([true, false]);
    for (const t of [a, b]) expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const leases = new Map<string, unknown>();
    for await (const [name, lease] of a.rt.docs.collection('ownership').scan()) leases.set(name, lease.holder);
    expect(leases.get('projector')).toBe(a.rt.ownership.me);
    expect(leases.get('reactor_dispatched-task')).toBe(a.rt.ownership.me);
  });

  it('answers a command on the follower once its own read models show it, both ways', async () => {
    const made = await b.call('POST', '/factory', { name: 'Made on b' });
    expect(made.statusCode).toBe(201);
    const uid = made.json().uid;
    // No waiting: the answer came once the owner had projected the factory.
    expect((await b.call('GET', `/factory/${uid}`)).statusCode).toBe(200);
    expect((await a.call('GET', `/factory/${uid}`)).statusCode).toBe(200);
    expect((await b.call('DELETE', `/factory/${uid}`)).statusCode).toBe(204);
    expect((await a.call('GET', `/factory/${uid}`)).statusCode).toBe(404);
    expect((await b.call('GET', `/factory/${uid}`)).statusCode).toBe(404);
  });
});

describe('webhook budgets', () => {
  let hook: Hook;
  beforeAll(async () => {
    hook = await makeHook(a, { authMode: 'token' });
  });

  it('counts deliveries once across processes: of 90 in a minute, 60 are accepted', async () => {
    const answers = await Promise.all(
      Array.from({ length: 90 }, (_, i) => postToken(i % 2 ? b : a, hook, JSON.stringify({ n: i }))),
    );
    const statuses = answers.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 202)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
    for (const r of answers.filter((r) => r.statusCode === 429))
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    const log = await deliveryLog(b, hook, '?limit=100');
    expect(log.deliveries.filter((d) => d.status === 'accepted')).toHaveLength(60);
  });

  it('counts failed authentications once across processes: past 30, strangers get 429 on both, the right token 202', async () => {
    const other = await makeHook(a, { authMode: 'token' });
    const wrong = (t: TestApp) => post(t, `/webhooks/w/${other.uid}`, '{}', { authorization: 'Bearer wrong' });
    for (let i = 0; i < 30; i++) expect((await wrong(i % 2 ? b : a)).statusCode).toBe(401);
    for (const t of [a, b]) expectProblem(await wrong(t), 429, 'rate_limited');
    for (const t of [a, b])
      expect((await postToken(t, other, `{"via":"${t === a ? 'a' : 'b'}"}`)).statusCode).toBe(202);
    // The two refusals past the budget, counted on each process, are one entry of the log.
    const log = (await deliveryLog(b, other, '?limit=100')).deliveries.map((d) => [d.status, d.count]);
    expect(log.slice(0, 3)).toEqual([
      ['accepted', undefined],
      ['accepted', undefined],
      ['rejected_auth', 2],
    ]);
    expect(log).toHaveLength(33);
  });
});

describe('a worker whose calls reach either process', () => {
  let key: string;
  const worker = 'roaming-1';
  const as = (t: TestApp, method: 'GET' | 'POST', url: string, body?: unknown, headers: Record<string, string> = {}) =>
    t.call(method, url, body, key, headers);
  const beat = async (t: TestApp, runs: string[] = [], acks: string[] = []) => {
    const res = await as(t, 'POST', `/agent/workers/${worker}/heartbeat`, { runs, acks });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().signals as Array<{ signal_id: string; type: string; run_id: string; message?: string }>;
  };

  beforeAll(async () => {
    const agent = await a.call('POST', '/agent/identities', { name: 'Roamer' });
    key = (await a.call('POST', `/agent/identities/${agent.json().uid}/api-keys`)).json().api_key;
  });

  it('is known to both once announced to one, and listed by both', async () => {
    expect((await as(a, 'POST', '/agent/workers', { host: 'box', worker_id: worker })).statusCode).toBe(201);
    await beat(b);
    for (const t of [a, b]) {
      const listed = (await t.call('GET', '/agent/connected-self-hosted-workers')).json().workers;
      expect(listed).toEqual([expect.objectContaining({ worker_id: worker, host: 'box', runs: [] })]);
    }
  });

  it('executes a run with its calls alternating between the processes, and hears its signals on either', async () => {
    const runId = (await a.call('POST', '/agent/runs', { prompt: 'roam' })).json().run_id;
    const claimed = await as(b, 'POST', `/agent/workers/${worker}/claim`);
    expect(claimed.statusCode, claimed.body).toBe(200);
    const x = claimed.json().run.execution_id as string;
    const report = (t: TestApp, what: string, body: unknown = {}) =>
      as(t, 'POST', `/agent/workers/${worker}/runs/${runId}/${what}`, body, { 'x-execution-id': x });
    expect((await report(a, 'claim')).statusCode).toBe(200);
    // Just leased through b: a heartbeat on a still knows the run is this worker's.
    expect(await beat(a, [runId])).toEqual([]);
    expect((await report(b, 'start')).statusCode).toBe(200);

    // A follow-up sent through a reaches the worker through b; acknowledged there, a never repeats it.
    expect((await a.call('POST', `/agent/runs/${runId}/followups`, { message: 'and docs' })).statusCode).toBe(200);
    let signals: Awaited<ReturnType<typeof beat>> = [];
    await expect.poll(async () => (signals = await beat(b, [runId])).length, { timeout: 3000 }).toBe(1);
    expect(signals[0]).toMatchObject({ type: 'followup', run_id: runId, message: 'and docs' });
    await beat(b, [runId], [signals[0]!.signal_id]);
    expect(await beat(a, [runId])).toEqual([]);
    expect(await beat(b, [runId])).toEqual([]);

    expect((await report(a, 'finish', { state: 'SUCCEEDED' })).statusCode).toBe(200);
    expect((await b.call('GET', `/agent/runs/${runId}`)).json().state).toBe('SUCCEEDED');
  });

  it('wakes a claim waiting on one process when a run is queued through the other', async () => {
    const waiting = as(b, 'POST', `/agent/workers/${worker}/claim?wait_seconds=10`);
    await new Promise((r) => setTimeout(r, 300));
    const runId = (await a.call('POST', '/agent/runs', { prompt: 'wake up' })).json().run_id;
    const claimed = await waiting;
    expect(claimed.statusCode, claimed.body).toBe(200);
    expect(claimed.json().run.run_id).toBe(runId);
  });
});

describe('handing over', () => {
  it('lets the follower take the projector and reactors at once when the owner shuts down', async () => {
    const c = arriving(await startTestApp({ DATA_DIR: a.dir }));
    try {
      expect(c.rt.projector.isOwner).toBe(false);
      await a.stop();
      await expect.poll(() => b.rt.projector.isOwner || c.rt.projector.isOwner, { timeout: 3000 }).toBe(true);
      const owner = b.rt.projector.isOwner ? b : c;
      const follower = owner === b ? c : b;
      // Commands on either are projected by the new owner.
      for (const t of [owner, follower]) {
        const made = await t.call('POST', '/factory', { name: 'After the handover' });
        expect(made.statusCode).toBe(201);
        expect((await follower.call('GET', `/factory/${made.json().uid}`)).statusCode).toBe(200);
      }
      // The reactors went too: dispatch still creates the task of a factory run.
      const factory = (await follower.call('POST', '/factory', { name: 'Dispatching' })).json().uid;
      await follower.call('POST', '/agent/identities', {
        name: 'Foreman',
        agent_type: 'FOREMAN',
        factory_uid: factory,
      });
      const run = await follower.call('POST', `/factory/${factory}/runs`, { prompt: 'Do it' });
      expect(run.statusCode, run.body).toBe(201);
      await expect
        .poll(async () => (await follower.call('GET', `/factory/${factory}/tasks`)).json().tasks.length, {
          timeout: 5000,
        })
        .toBe(1);
    } finally {
      await c.close({ keepData: true });
    }
  });
});
