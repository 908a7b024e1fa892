/**
 * Concurrency limits and stuck runs through the real app: runs over `max_concurrent_runs` wait in
 * QUEUED with their `queue_position` and are never handed to a worker until a place frees; the
 * claim is fair between a team's factories; a run in progress without progress for its
 * `stuck_after_minutes`, or past its `max_run_minutes`, ends ERROR saying which, and its worker
 * is told to stop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { newWorker, type Worker } from '../../helpers/analytics-fixtures.js';
import { settleGuards } from '../../helpers/guardrail-fixtures.js';
import { eventually } from '../../helpers/task-fixtures.js';

const clock = manualClock('2026-03-02T09:00:00Z');
let t: TestApp;
let a: Worker;
let b: Worker;
let factoryA: string;
let factoryB: string;

beforeAll(async () => {
  t = await startTestApp({ GUARDRAIL_SWEEP_SECONDS: '0.05' }, clock);
  factoryA = (await t.call('POST', '/factory', { name: 'A' })).json().uid;
  factoryB = (await t.call('POST', '/factory', { name: 'B' })).json().uid;
  a = await newWorker(t, factoryA, 'A worker');
  b = await newWorker(t, factoryB, 'B worker');
});
afterAll(() => t.close());

/** A run of the worker's factory (through its agent), created at `at`. */
const startRun = async (w: Worker, at: string) => {
  clock.set(at);
  const res = await t.call('POST', '/agent/runs', { prompt: 'Work', agent_identity_uid: w.agentUid });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().run_id as string;
};
const claim = (w: Worker) => t.call('POST', `/agent/workers/${w.workerId}/claim`, undefined, w.key);
const report = (w: Worker, runId: string, executionId: string, what: string, body?: unknown) =>
  t.call('POST', `/agent/workers/${w.workerId}/runs/${runId}/${what}`, body, w.key, { 'x-execution-id': executionId });
const runOf = async (id: string) => (await t.call('GET', `/agent/runs/${id}`)).json();

describe('max_concurrent_runs', () => {
  it('holds runs over the team limit in QUEUED, in order, until a place frees; fair between factories', async () => {
    expect((await t.call('PUT', `/teams/${t.teamUid}/limits`, { max_concurrent_runs: 2 })).statusCode).toBe(200);
    const a1 = await startRun(a, '2026-03-02T09:00:00Z');
    const a2 = await startRun(a, '2026-03-02T09:00:01Z');
    const a3 = await startRun(a, '2026-03-02T09:00:02Z');
    const b1 = await startRun(b, '2026-03-02T09:00:03Z');
    expect((await runOf(a3)).queue_position).toBe(3);
    expect((await runOf(b1)).queue_position).toBe(1);

    const first = (await claim(a)).json().run;
    expect(first.run_id).toBe(a1);
    // Factory A holds a place, B none: B's run goes before A's older ones.
    const second = (await claim(a)).json().run;
    expect(second.run_id).toBe(b1);
    // Both places are taken: nothing is handed out, and the runs wait in QUEUED.
    expect((await claim(b)).statusCode).toBe(204);
    expect((await runOf(a2)).state).toBe('QUEUED');
    expect((await runOf(a2)).queue_position).toBe(1);

    await report(a, a1, first.execution_id, 'claim');
    await report(a, a1, first.execution_id, 'finish', { state: 'SUCCEEDED' });
    const third = await claim(b);
    expect(third.statusCode, third.body).toBe(200);
    expect(third.json().run.run_id).toBe(a2);
    await t.call('POST', `/agent/runs/${b1}/cancel`);
    await t.call('POST', `/agent/runs/${a2}/cancel`);
    await t.call('POST', `/agent/runs/${a3}/cancel`);
  });

  it('a factory limit holds its own runs while the team has room', async () => {
    await t.call('PUT', `/teams/${t.teamUid}/limits`, {});
    await t.call('PUT', `/factory/${factoryA}/limits`, { max_concurrent_runs: 1 });
    await settleGuards(t);
    const x1 = await startRun(a, '2026-03-02T10:00:00Z');
    const x2 = await startRun(a, '2026-03-02T10:00:01Z');
    const y1 = await startRun(b, '2026-03-02T10:00:02Z');
    expect((await claim(a)).json().run.run_id).toBe(x1);
    expect((await claim(a)).json().run.run_id).toBe(y1);
    expect((await claim(a)).statusCode).toBe(204);
    expect((await runOf(x2)).state).toBe('QUEUED');
    for (const id of [x1, x2, y1]) await t.call('POST', `/agent/runs/${id}/cancel`);
    await t.call('PUT', `/factory/${factoryA}/limits`, {});
  });
});

describe('stuck runs', () => {
  /** A run of factory B in progress since `at`: its execution id. */
  async function inProgress(at: string): Promise<{ runId: string; executionId: string }> {
    const runId = await startRun(b, at);
    let run = (await claim(b)).json().run;
    while (run.run_id !== runId) run = (await claim(b)).json().run;
    await report(b, runId, run.execution_id, 'claim');
    await report(b, runId, run.execution_id, 'start');
    return { runId, executionId: run.execution_id };
  }

  it('a run without progress for stuck_after_minutes ends ERROR, and its worker is told', async () => {
    await t.call('PUT', `/factory/${factoryB}/limits`, { stuck_after_minutes: 10 });
    const { runId, executionId } = await inProgress('2026-03-02T11:00:00Z');
    clock.set('2026-03-02T11:09:00Z');
    expect((await report(b, runId, executionId, 'timeline', { name: 'step' })).statusCode).toBeLessThan(300);
    clock.set('2026-03-02T11:18:00Z');
    await settleGuards(t);
    expect((await runOf(runId)).state).toBe('INPROGRESS');
    clock.set('2026-03-02T11:19:00Z');
    const errored = await eventually(async () => {
      const r = await runOf(runId);
      return r.state === 'ERROR' ? r : undefined;
    });
    expect(errored.status_message).toMatchObject({
      error_code: 'run_stuck',
      message: expect.stringContaining('10 minutes'),
    });
    const heartbeat = await t.call('POST', `/agent/workers/${b.workerId}/heartbeat`, { runs: [runId] }, b.key);
    expect(JSON.stringify(heartbeat.json())).toContain('timed_out');
    await settleGuards(t);
    const inbox = (await t.call('GET', '/factory-inbox?scope=team')).json().notifications as Array<{
      kind: string;
      run_id?: string;
      title: string;
    }>;
    expect(inbox.filter((n) => n.kind === 'run_timed_out' && n.run_id === runId).map((n) => n.title)).toEqual([
      'A run made no progress for too long and ended ERROR',
    ]);
  });

  it('a run past max_run_minutes ends ERROR though it makes progress', async () => {
    await t.call('PUT', `/factory/${factoryB}/limits`, { stuck_after_minutes: 10, max_run_minutes: 15 });
    const { runId, executionId } = await inProgress('2026-03-02T12:00:00Z');
    for (const at of ['2026-03-02T12:08:00Z', '2026-03-02T12:14:00Z']) {
      clock.set(at);
      await report(b, runId, executionId, 'timeline', { name: 'step' });
    }
    clock.set('2026-03-02T12:15:00Z');
    const errored = await eventually(async () => {
      const r = await runOf(runId);
      return r.state === 'ERROR' ? r : undefined;
    });
    expect(errored.status_message.error_code).toBe('run_max_duration');
  });
});

describe('a stalled queue', () => {
  it('gets one notice when runs wait past the threshold with no worker connected, cleared when one connects', async () => {
    const team = (await t.call('POST', '/teams', { name: 'No workers yet' })).json().uid as string;
    const asTeam = { 'x-service-team-uid': team };
    clock.set('2026-03-03T09:00:00Z');
    for (let i = 0; i < 3; i++)
      expect((await t.call('POST', '/agent/runs', { prompt: `wait ${i}` }, undefined, asTeam)).statusCode).toBe(200);
    const stalledNotices = async () =>
      (
        (await t.call('GET', '/factory-inbox?scope=team', undefined, undefined, asTeam)).json().notifications as Array<{
          kind: string;
          title: string;
        }>
      ).filter((n) => n.kind === 'queue_stalled');
    clock.set('2026-03-03T09:14:00Z');
    await settleGuards(t);
    expect(await stalledNotices()).toEqual([]);
    clock.set('2026-03-03T09:16:00Z');
    const [notice] = await eventually(async () => {
      const found = await stalledNotices();
      return found.length ? found : undefined;
    });
    expect(notice!.title).toBe('3 queued run(s) wait with no worker connected');
    // Later sweeps tell nothing more: still one notice, one event.
    clock.set('2026-03-03T10:00:00Z');
    await settleGuards(t);
    expect(await stalledNotices()).toHaveLength(1);
    const agent = (await t.call('POST', '/agent/identities', { name: 'Late worker' }, undefined, asTeam)).json();
    const key = (await t.call('POST', `/agent/identities/${agent.uid}/api-keys`, undefined, undefined, asTeam)).json()
      .api_key;
    expect((await t.call('POST', '/agent/workers', { host: 'late' }, key)).statusCode).toBe(201);
    await eventually(async () => ((await stalledNotices()).length === 0 ? true : undefined));
    const stalls = (await t.rt.events.readStream(`queuestall-${team}`)).map((e) => e.type);
    expect(stalls).toEqual(['QueueStalled', 'QueueStallEnded']);
  });
});
