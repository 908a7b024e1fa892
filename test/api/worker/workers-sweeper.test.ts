/**
 * Taking runs back from workers, with fast timings (heartbeat 0.4 s, lease 0.4 s): an
 * unacknowledged lease goes back to the queue; a worker that stops heartbeating loses its runs
 * (never started: queued again; in progress: ERROR); and after a server restart the runs held
 * before it, and the workers' presence, are still known: a returning worker carries on, and one
 * that never comes back still loses them.
 *
 * The sweeper and the presence judge by the wall clock (`Date.now()`), which the test holds still
 * and moves itself: a lease or a worker lapses when the test moves time past it, never because a
 * loaded machine was slow between two steps. The sweeper's own timer runs in real time and only
 * decides when it looks; each wait is for the state it must bring.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { InjectOptions } from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { features } from '../../../src/features.js';
import { createLogger } from '../../../src/log.js';
import { openServer } from '../../../src/server.js';
import { ADMIN_KEY } from '../../helpers/app.js';

const FAST = { WORKER_HEARTBEAT_SECONDS: '0.4', WORKER_LEASE_SECONDS: '0.4' };
/** Past the lease, not past the three missed heartbeats that lose a worker. */
const PAST_LEASE_MS = 600;
/** Past the three missed heartbeats (1.2 s). */
const PAST_LOSS_MS = 1500;

/** Moves the wall clock the sweeper and the presence judge by. */
const advance = (ms: number) => vi.setSystemTime(Date.now() + ms);

/** The app on `dir`, which may hold the data of an earlier start (a restart). */
async function openApp(dir: string) {
  const config = loadConfig({
    DATA_DIR: dir,
    BOOTSTRAP_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'silent',
    // As in startTestApp: a test process starved of CPU by its neighbours must not shed its own requests.
    LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
    ...FAST,
  });
  const server = await openServer(config, createLogger(config), features);
  const { app, rt } = server;
  const call = async (
    method: InjectOptions['method'],
    url: string,
    body?: unknown,
    key = ADMIN_KEY,
    headers: Record<string, string> = {},
  ) => {
    const res = await app.inject({
      method,
      url: `/api/v1${url}`,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    return { status: res.statusCode, body: res.body ? res.json() : null };
  };
  return {
    rt,
    call,
    close: server.close,
  };
}

type App = Awaited<ReturnType<typeof openApp>>;

const dirs: string[] = [];
const open: App[] = [];
beforeEach(() => {
  vi.setSystemTime(new Date('2026-05-04T09:00:00Z'));
});
afterEach(async () => {
  for (const app of open.splice(0)) await app.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  vi.useRealTimers();
});

async function start(dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-sweeper-'))) {
  if (!dirs.includes(dir)) dirs.push(dir);
  const app = await openApp(dir);
  open.push(app);
  return { app, dir };
}

/** An agent with a key and a registered worker, in the admin's first team or the one `headers` names. */
async function setUp(app: App, headers: Record<string, string> = {}, workerId = 'w-1') {
  const agent = await app.call('POST', '/agent/identities', { name: `Runner ${workerId}` }, undefined, headers);
  const key = (await app.call('POST', `/agent/identities/${agent.body.uid}/api-keys`)).body.api_key as string;
  const worker = (await app.call('POST', '/agent/workers', { host: 'h', worker_id: workerId }, key)).body
    .worker_id as string;
  return { key, worker };
}

/** Polls `check` until it returns a value (bounded in real time: the wall clock stands still). */
async function eventually<T>(check: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
  for (const deadline = performance.now() + timeoutMs; ; ) {
    const value = await check();
    if (value) return value;
    if (performance.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const stateOf = async (app: App, runId: string) =>
  (await app.call('GET', `/agent/runs/${runId}`)).body as { state: string; status_message?: unknown };
const newRun = async (app: App, prompt: string, headers: Record<string, string> = {}) =>
  (await app.call('POST', '/agent/runs', { prompt }, undefined, headers)).body.run_id as string;

async function claim(app: App, key: string, worker: string, runId: string) {
  const res = await app.call('POST', `/agent/workers/${worker}/claim`, undefined, key);
  expect(res.status).toBe(200);
  expect(res.body.run.run_id).toBe(runId);
  return res.body.run.execution_id as string;
}

const report = (
  app: App,
  key: string,
  worker: string,
  runId: string,
  executionId: string,
  what: string,
  body?: unknown,
) => app.call('POST', `/agent/workers/${worker}/runs/${runId}/${what}`, body, key, { 'x-execution-id': executionId });

/** A worker's run, claimed, acknowledged and started: the worker holds it in progress. */
async function startedRun(app: App, key: string, worker: string, prompt: string) {
  const runId = await newRun(app, prompt);
  const x = await claim(app, key, worker, runId);
  await report(app, key, worker, runId, x, 'claim');
  await report(app, key, worker, runId, x, 'start');
  return { runId, x };
}

describe('the worker sweeper', () => {
  it('queues a run again when its lease is not acknowledged in time, and stops the late execution', async () => {
    const { app } = await start();
    const { key, worker } = await setUp(app);
    const runId = await newRun(app, 'lease me');
    const execution = await claim(app, key, worker, runId);
    advance(PAST_LEASE_MS);
    await eventually(async () => (await stateOf(app, runId)).state === 'QUEUED');
    const types = (await app.rt.events.readStream(`run-${runId}`)).map((e) => e.type);
    expect(types).toEqual(['RunCreated', 'RunLeased', 'RunLeaseExpired']);
    // The late acknowledgement is refused, and the worker is told to stop that execution.
    expect((await report(app, key, worker, runId, execution, 'claim')).body).toMatchObject({
      status: 409,
      code: 'not_claimed',
    });
    const beat = await app.call('POST', `/agent/workers/${worker}/heartbeat`, { runs: [runId] }, key);
    expect(beat.body.signals).toEqual([
      expect.objectContaining({ type: 'cancel', run_id: runId, execution_id: execution, cause: 'lease_expired' }),
    ]);
    // The run is there for the taking again.
    const again = await claim(app, key, worker, runId);
    expect(again).not.toBe(execution);
  });

  it('keeps the runs of a worker that heartbeats, while a silent one beside it loses its own', async () => {
    const { app } = await start();
    const beating = await setUp(app, {}, 'beating');
    const silent = await setUp(app, {}, 'silent');
    const kept = await startedRun(app, beating.key, beating.worker, 'keep me');
    const lost = await startedRun(app, silent.key, silent.worker, 'lose me');
    // Five heartbeat intervals, a heartbeat in each: more than the three that lose a worker.
    for (let i = 0; i < 5; i++) {
      advance(400);
      const beat = await app.call(
        'POST',
        `/agent/workers/${beating.worker}/heartbeat`,
        { runs: [kept.runId] },
        beating.key,
      );
      expect(beat.status).toBe(200);
    }
    // The sweeper has looked at this time: the silent worker's run is taken back, the other's is not.
    await eventually(async () => (await stateOf(app, lost.runId)).state === 'ERROR');
    expect((await stateOf(app, kept.runId)).state).toBe('INPROGRESS');
  });

  it('takes the runs of a silent worker: started ones err, the others are queued again', async () => {
    const { app } = await start();
    const { key, worker } = await setUp(app);
    const { runId: started } = await startedRun(app, key, worker, 'half done');
    const acknowledged = await newRun(app, 'acknowledged only');
    const y = await claim(app, key, worker, acknowledged);
    await report(app, key, worker, acknowledged, y, 'claim');
    // No heartbeat from here on.
    advance(PAST_LOSS_MS);
    const lost = await eventually(async () => {
      const run = await stateOf(app, started);
      return run.state === 'ERROR' && run;
    });
    expect(lost.status_message).toEqual({
      message: 'The worker executing the run stopped heartbeating',
      error_code: 'resource_unavailable',
      retryable: true,
    });
    await eventually(async () => (await stateOf(app, acknowledged)).state === 'QUEUED');
    const lostEvents = (await app.rt.events.readStream(`run-${acknowledged}`)).filter(
      (e) => e.type === 'RunWorkerLost',
    );
    expect(lostEvents.map((e) => e.data)).toEqual([{ run_id: acknowledged, worker_id: worker, requeued: true }]);
    // The worker is gone: not listed, and asked to announce again.
    expect((await app.call('GET', '/agent/connected-self-hosted-workers')).body.workers).toEqual([]);
    expect((await app.call('POST', `/agent/workers/${worker}/heartbeat`, {}, key)).status).toBe(404);
  });
});

describe('a server restart', () => {
  it('keeps what workers hold: a returning worker carries on and hears its signals again', async () => {
    const first = await start();
    const { key, worker } = await setUp(first.app);
    const { runId, x } = await startedRun(first.app, key, worker, 'survive a restart');
    await first.app.call('POST', `/agent/runs/${runId}/followups`, { message: 'one more thing' });
    const pending = await newRun(first.app, 'leased before the restart');
    await claim(first.app, key, worker, pending);
    await first.app.close();
    open.splice(open.indexOf(first.app), 1);

    const { app } = await start(first.dir);
    // Presence is kept in the store: the worker carries on under its id without announcing again.
    const beat = await app.call('POST', `/agent/workers/${worker}/heartbeat`, { runs: [runId] }, key);
    expect(beat.status).toBe(200);
    expect(beat.body.signals).toEqual([
      expect.objectContaining({ type: 'followup', run_id: runId, execution_id: x, message: 'one more thing' }),
    ]);
    // The unacknowledged lease still runs out; the run in progress stays with its worker.
    advance(PAST_LEASE_MS);
    await eventually(async () => (await stateOf(app, pending)).state === 'QUEUED');
    expect((await stateOf(app, runId)).state).toBe('INPROGRESS');
    expect((await report(app, key, worker, runId, x, 'finish', { state: 'SUCCEEDED' })).status).toBe(200);
  });

  it('takes back the runs of workers that never come back, in every team', async () => {
    const first = await start();
    const second = (await first.app.call('POST', '/teams', { name: 'Second' })).body.uid as string;
    const orphans: string[] = [];
    for (const [i, headers] of ([{}, { 'x-service-team-uid': second }] as Record<string, string>[]).entries()) {
      const { key, worker } = await setUp(first.app, headers, `w-${i}`);
      const runId = await newRun(first.app, 'orphaned', headers);
      const x = await claim(first.app, key, worker, runId);
      await report(first.app, key, worker, runId, x, 'claim');
      await report(first.app, key, worker, runId, x, 'start');
      orphans.push(runId);
    }
    await first.app.close();
    open.splice(open.indexOf(first.app), 1);

    const { app } = await start(first.dir);
    advance(PAST_LOSS_MS);
    for (const runId of orphans) await eventually(async () => (await stateOf(app, runId)).state === 'ERROR');
  });
});
