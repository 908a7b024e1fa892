import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRun } from '../../../commands/run/create.js';
import { runRequestSchema } from '../../../commands/run/schema.js';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';
import {
  adminContext,
  type Held,
  newRun,
  outsiderKey,
  runCommand,
  startRun,
  teammateKey,
} from '../../helpers/conversation-fixtures.js';

let t: TestApp;
let outsider: string;
beforeAll(async () => {
  t = await startTestApp();
  outsider = await outsiderKey(t);
});
afterAll(() => t.close());

const get = async (runId: string) => (await t.call('GET', `/agent/runs/${runId}`)).json();
const timelineTypes = async (runId: string) =>
  ((await t.call('GET', `/agent/runs/${runId}/timeline`)).json().events as Array<{ event_type: string }>).map(
    (e) => e.event_type,
  );

/** Hands the run to a worker: PENDING until it claims it. */
async function lease(runId: string): Promise<Held> {
  const held = { worker_id: 'w-1', execution_id: uuidv4() };
  await runCommand(t, runId, {
    type: 'LeaseRun',
    data: { run_id: runId, ...held, lease_expires_at: new Date(Date.now() + 60_000).toISOString() },
  });
  return held;
}

const finish = (
  runId: string,
  held: Held,
  state: 'SUCCEEDED' | 'FAILED',
  status_message: Record<string, unknown> | null = null,
) =>
  runCommand(t, runId, {
    type: 'FinishRun',
    data: { run_id: runId, ...held, state, status_message: status_message as never },
  });

const minutesFromNow = (n: number) => new Date(Date.now() + n * 60_000).toISOString();

describe('POST /agent/runs/{runId}/cancel', () => {
  it('cancels a queued or running run and answers with its id as a JSON string', async () => {
    const queued = await newRun(t);
    const res = await t.call('POST', `/agent/runs/${queued.run_id}/cancel`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toBe(queued.run_id);
    expect(await get(queued.run_id)).toMatchObject({ state: 'CANCELLED', finished_at: expect.any(String) });

    const running = await newRun(t);
    await startRun(t, running.run_id);
    expect((await t.call('POST', `/agent/runs/${running.run_id}/cancel`)).statusCode).toBe(200);
    expect(await get(running.run_id)).toMatchObject({ state: 'CANCELLED', is_sandbox_running: false });
    expect(await timelineTypes(running.run_id)).toContain('oz_run_cancelled');
  });

  it('refuses an ended run with 400', async () => {
    const run = await newRun(t);
    await finish(run.run_id, await startRun(t, run.run_id), 'SUCCEEDED');
    await expectRefused(t, () => t.call('POST', `/agent/runs/${run.run_id}/cancel`), 400, 'invalid_request');
    const cancelled = await newRun(t);
    await t.call('POST', `/agent/runs/${cancelled.run_id}/cancel`);
    await expectRefused(t, () => t.call('POST', `/agent/runs/${cancelled.run_id}/cancel`), 400, 'invalid_request');
  });

  it('refuses a run being handed to a worker with 409, retryable', async () => {
    const run = await newRun(t);
    await lease(run.run_id);
    const body = await expectRefused(t, () => t.call('POST', `/agent/runs/${run.run_id}/cancel`), 409, 'conflict');
    expect(body.retryable).toBe(true);
    expect((await get(run.run_id)).state).toBe('PENDING');
  });

  it('refuses a run type the server cannot stop with 422', async () => {
    const request = runRequestSchema.parse({ prompt: 'From a workflow' });
    const run = await createRun(t.rt, request, adminContext(t), { source: 'GITHUB_ACTION', team_uid: t.teamUid });
    expect((await get(run.run_id)).is_run_type_cancellable).toBe(false);
    await expectRefused(t, () => t.call('POST', `/agent/runs/${run.run_id}/cancel`), 422, 'operation_not_supported');
  });

  it('answers 404 for a run the caller cannot see, or none', async () => {
    const run = await newRun(t);
    await expectRefused(
      t,
      () => t.call('POST', `/agent/runs/${run.run_id}/cancel`, undefined, outsider),
      404,
      'resource_not_found',
    );
    await expectRefused(t, () => t.call('POST', '/agent/runs/no-such-run/cancel'), 404);
    const personal = await newRun(t, { team: false });
    const teammate = await teammateKey(t);
    await expectRefused(t, () => t.call('POST', `/agent/runs/${personal.run_id}/cancel`, undefined, teammate), 404);
  });
});

describe('POST /agent/runs/{runId}/interrupt', () => {
  it('asks the live turn to stop with 202; the run stays in progress', async () => {
    const run = await newRun(t);
    const held = await startRun(t, run.run_id);
    const before = await t.head();
    const res = await t.call('POST', `/agent/runs/${run.run_id}/interrupt`);
    expect(res.statusCode, res.body).toBe(202);
    expect(await t.head()).toBeGreaterThan(before);
    expect((await get(run.run_id)).state).toBe('INPROGRESS');
    const events = (await t.call('GET', `/agent/runs/${run.run_id}/timeline`)).json().events;
    expect(events.at(-1)).toMatchObject({ event_type: 'interrupt_requested', execution_id: held.execution_id });
  });

  it('is a 202 that changes nothing when no turn is live', async () => {
    const run = await newRun(t);
    for (const step of ['queued', 'ended']) {
      if (step === 'ended') await finish(run.run_id, await startRun(t, run.run_id), 'SUCCEEDED');
      const before = await t.head();
      expect((await t.call('POST', `/agent/runs/${run.run_id}/interrupt`)).statusCode).toBe(202);
      expect(await t.head()).toBe(before);
    }
  });

  it('answers 404 for a run the caller cannot see', async () => {
    const run = await newRun(t);
    await expectRefused(t, () => t.call('POST', `/agent/runs/${run.run_id}/interrupt`, undefined, outsider), 404);
  });
});

describe('POST /agent/runs/{runId}/followups', () => {
  const followup = (runId: string, body: unknown = { message: 'Also update the changelog' }, key?: string) =>
    t.call('POST', `/agent/runs/${runId}/followups`, body, key);

  it('joins the prompt of a queued run, and of one being handed to a worker', async () => {
    const run = await newRun(t, { prompt: 'Fix the build' });
    const res = await followup(run.run_id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ run_id: run.run_id, state: 'QUEUED', routed_to: 'queued_prompt' });
    expect((await get(run.run_id)).prompt).toBe('Fix the build\n\nAlso update the changelog');

    await lease(run.run_id);
    expect((await followup(run.run_id, { message: 'and bump the version', mode: 'plan' })).json()).toMatchObject({
      state: 'PENDING',
      routed_to: 'queued_prompt',
    });
    expect((await get(run.run_id)).prompt).toMatch(/and bump the version$/);
  });

  it('delivers to the live execution of a running run', async () => {
    const run = await newRun(t);
    const held = await startRun(t, run.run_id);
    expect((await followup(run.run_id)).json()).toEqual({
      run_id: run.run_id,
      state: 'INPROGRESS',
      routed_to: 'live_execution',
    });
    const events = (await t.call('GET', `/agent/runs/${run.run_id}/timeline`)).json().events;
    expect(events.at(-1)).toMatchObject({
      event_type: 'followup_delivered',
      execution_id: held.execution_id,
      payload: { to: 'execution' },
    });
  });

  it('starts a new execution of an ended run', async () => {
    const run = await newRun(t);
    await finish(run.run_id, await startRun(t, run.run_id), 'SUCCEEDED');
    expect((await followup(run.run_id)).json()).toEqual({
      run_id: run.run_id,
      state: 'QUEUED',
      routed_to: 'new_execution',
    });
    expect(await get(run.run_id)).toMatchObject({ state: 'QUEUED', finished_at: null });
    expect((await timelineTypes(run.run_id)).at(-1)).toBe('run_resumed');
  });

  it('goes to the retained debug session of a setup failure inside its window, keeping state, message and code', async () => {
    const run = await newRun(t);
    const held = await lease(run.run_id);
    await runCommand(t, run.run_id, { type: 'ClaimRun', data: { run_id: run.run_id, ...held } });
    const failure = {
      message: 'npm ci failed',
      error_code: 'environment_setup_failed',
      retryable: false,
      session_debug_until: minutesFromNow(10),
    };
    await finish(run.run_id, held, 'FAILED', failure);
    expect(await get(run.run_id)).toMatchObject({
      debug_agent_available: true,
      is_sandbox_running: true,
      status_message: failure,
    });

    expect((await followup(run.run_id, { message: 'why did npm ci fail?' })).json()).toEqual({
      run_id: run.run_id,
      state: 'FAILED',
      routed_to: 'debug_session',
    });
    expect(await get(run.run_id)).toMatchObject({
      state: 'FAILED',
      status_message: { message: 'npm ci failed', error_code: 'environment_setup_failed' },
    });
  });

  it('resumes a setup failure whose debug window has closed', async () => {
    const run = await newRun(t);
    const held = await lease(run.run_id);
    await runCommand(t, run.run_id, { type: 'ClaimRun', data: { run_id: run.run_id, ...held } });
    await finish(run.run_id, held, 'FAILED', {
      message: 'npm ci failed',
      error_code: 'environment_setup_failed',
      session_debug_until: minutesFromNow(-1),
    });
    const item = await get(run.run_id);
    expect(item).toMatchObject({ debug_agent_available: false, is_sandbox_running: false });
    expect(item.status_message).toEqual({ message: 'npm ci failed', error_code: 'environment_setup_failed' });
    expect((await followup(run.run_id)).json()).toMatchObject({ state: 'QUEUED', routed_to: 'new_execution' });
  });

  it('refuses an empty or missing message, an unknown mode or field, and an invisible run, without writing', async () => {
    const run = await newRun(t);
    await expectRefused(t, () => followup(run.run_id, { message: '' }), 400);
    await expectRefused(t, () => followup(run.run_id, { message: '  \n ' }), 400);
    await expectRefused(t, () => followup(run.run_id, {}), 400);
    await expectRefused(t, () => followup(run.run_id, { message: 'x', mode: 'yolo' }), 400);
    await expectRefused(t, () => followup(run.run_id, { message: 'x', attachments: [] }), 400);
    await expectRefused(t, () => followup(run.run_id, undefined, outsider), 404);
    await expectRefused(t, () => followup('no-such-run'), 404);
    expectProblem(await t.call('POST', `/agent/runs/${run.run_id}/followups`, { message: 'x' }, null), 401);
  });
});
