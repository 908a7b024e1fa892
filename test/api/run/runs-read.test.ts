import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Attachment } from '../../../commands/run/events.js';
import { isoDuration } from '../../../commands/run/resource.js';
import { settle } from '../../helpers/analytics-fixtures.js';
import { expectProblem, expectRefused, newEnvironment, startTestApp, type TestApp } from '../../helpers/app.js';
import {
  addArtifact,
  type Held,
  newRun,
  outsiderKey,
  runCommand,
  signedPath,
  startRun,
  workerContext,
} from '../../helpers/conversation-fixtures.js';

let t: TestApp;
let outsider: string;
beforeAll(async () => {
  t = await startTestApp();
  outsider = await outsiderKey(t);
});
afterAll(() => t.close());

const get = (path: string, key?: string) => t.call('GET', path, undefined, key);
const later = (from: string, seconds: number) => new Date(Date.parse(from) + seconds * 1000).toISOString();
/** The worker's context at a chosen moment, so that times are exact. */
const at = (now: string) => ({ ...workerContext(), now });

async function handoffFile(runId: string, held: Held, name: string): Promise<Attachment> {
  const attachment = {
    attachment_id: uuidv4(),
    file_name: name,
    mime_type: 'application/x-tar',
    size_bytes: 5,
    blob: await t.rt.blobs.put(Buffer.from(name)),
  };
  await runCommand(t, runId, { type: 'AddHandoffFile', data: { run_id: runId, ...held, attachment } });
  return attachment;
}

describe('isoDuration', () => {
  it('writes hours, minutes and seconds', () => {
    expect(isoDuration(0)).toBe('PT0S');
    expect(isoDuration(1_500)).toBe('PT1.5S');
    expect(isoDuration(150_000)).toBe('PT2M30S');
    expect(isoDuration(3_605_250)).toBe('PT1H0M5.25S');
  });
});

describe('GET /agent/runs/{runId}', () => {
  it('gives the RunItem of a run through its life', async () => {
    const env = await newEnvironment(t);
    const res = await t.call('POST', '/agent/runs', {
      prompt: 'Ship it',
      config: { name: 'Shipper', model_id: 'gpt-5-4-high', environment_id: env },
      metadata: { ticket_url: 'https://linear.app/acme/issue/VIS-9' },
    });
    const { run_id, conversation_id } = res.json();
    const queued = (await get(`/agent/runs/${run_id}`)).json();
    expect(queued).toMatchObject({
      state: 'QUEUED',
      started_at: null,
      finished_at: null,
      is_sandbox_running: false,
      is_run_type_cancellable: true,
      artifacts: [],
    });
    expect(queued).not.toHaveProperty('run_time');
    expect(queued).not.toHaveProperty('session_link');

    const held = { worker_id: 'w-1', execution_id: uuidv4() };
    const start = new Date().toISOString();
    await runCommand(
      t,
      run_id,
      { type: 'LeaseRun', data: { run_id, ...held, lease_expires_at: later(start, 60) } },
      at(start),
    );
    await runCommand(t, run_id, { type: 'ClaimRun', data: { run_id, ...held } }, at(start));
    await runCommand(t, run_id, { type: 'StartRun', data: { run_id, ...held } }, at(start));
    const usage = { inference_cost: 1.5, compute_cost: 0.5, total_tokens: 1200 };
    await runCommand(t, run_id, { type: 'ReportUsage', data: { run_id, ...held, usage } }, at(later(start, 60)));
    await addArtifact(t, run_id, held, {
      artifact_uid: uuidv4(),
      artifact_type: 'PULL_REQUEST',
      public: false,
      url: 'https://github.com/acme/app/pull/7',
      branch: 'fix',
    });
    await addArtifact(t, run_id, held, {
      artifact_uid: 'f-1',
      artifact_type: 'FILE',
      public: false,
      filepath: 'out/report.md',
      filename: 'report.md',
      mime_type: 'text/markdown',
      blob: 'secret-blob',
    });
    const running = (await get(`/agent/runs/${run_id}`)).json();
    expect(running).toMatchObject({
      state: 'INPROGRESS',
      started_at: start,
      is_sandbox_running: true,
      session_id: conversation_id,
    });
    expect(running.session_link).toBe(`${t.rt.config.publicBaseUrl}/sessions/${conversation_id}`);

    await runCommand(
      t,
      run_id,
      {
        type: 'FinishRun',
        data: { run_id, ...held, state: 'SUCCEEDED', status_message: { message: 'Opened a pull request' } },
      },
      at(later(start, 150)),
    );
    await settle(t); // the cost ledger prices the usage and the execution
    const item = (await get(`/agent/runs/${run_id}`)).json();
    expect(item).toMatchObject({
      run_id,
      task_id: run_id,
      title: 'Ship it',
      state: 'SUCCEEDED',
      prompt: 'Ship it',
      started_at: start,
      finished_at: later(start, 150),
      run_time: 'PT2M30S',
      execution_location: 'REMOTE',
      status_message: { message: 'Opened a pull request' },
      source: 'API',
      trigger_url: 'https://linear.app/acme/issue/VIS-9',
      creator: { type: 'user', uid: t.adminUid },
      executor: { type: 'user', uid: t.adminUid },
      // Priced by the server: the report names no model's tokens (the worker's own dollars are not
      // trusted); 150 s of machine and platform time at the shipped rates ($0.20 and $0.10 an hour).
      request_usage: {
        inference_cost: 0,
        compute_cost: 0.8333333,
        platform_cost: 0.4166667,
        inference_cost_usd: 0,
        compute_cost_usd: 0.008333333,
        platform_cost_usd: 0.004166667,
        total_tokens: usage.total_tokens,
        inference_cost_breakdown_usd: {
          input_cost_usd: 0,
          input_cache_read_cost_usd: 0,
          input_cache_write_cost_usd: 0,
          output_cost_usd: 0,
        },
        model_token_usage: [],
      },
      agent_config: { name: 'Shipper', model_id: 'gpt-5-4-high', environment_id: env },
      conversation_id,
      root_run_id: run_id,
      is_sandbox_running: false,
      debug_agent_available: false,
      scope: { type: 'Team', uid: t.teamUid },
      metadata: { ticket_url: 'https://linear.app/acme/issue/VIS-9' },
    });
    expect(item.artifacts).toEqual([
      {
        artifact_type: 'PULL_REQUEST',
        created_at: expect.any(String),
        data: { artifact_uid: expect.any(String), url: 'https://github.com/acme/app/pull/7', branch: 'fix' },
      },
      {
        artifact_type: 'FILE',
        created_at: expect.any(String),
        data: { artifact_uid: 'f-1', filepath: 'out/report.md', filename: 'report.md', mime_type: 'text/markdown' },
      },
    ]);
    expect(item).not.toHaveProperty('parent_run_id');
  });

  it('names the agent identity as the executor of a run it executes', async () => {
    const agent = (await t.call('POST', '/agent/identities', { name: 'Builder' })).json();
    const run = (await t.call('POST', '/agent/runs', { prompt: 'Build', agent_identity_uid: agent.uid })).json();
    expect((await get(`/agent/runs/${run.run_id}`)).json()).toMatchObject({
      creator: { type: 'user', uid: t.adminUid },
      executor: { type: 'service_account', uid: agent.uid },
    });
  });

  it('answers 404 for a run the caller cannot see, or none', async () => {
    const run = await newRun(t);
    await expectRefused(t, () => get(`/agent/runs/${run.run_id}`, outsider), 404, 'resource_not_found');
    expectProblem(await get('/agent/runs/no-such-run'), 404);
    const personal = await newRun(t, { team: false });
    expect((await get(`/agent/runs/${personal.run_id}`)).statusCode).toBe(200);
  });
});

describe('GET /agent/runs/{runId}?as_of=', () => {
  it('gives the run as its events had left it at that moment', async () => {
    const { run_id } = await newRun(t, { prompt: 'Travel in time' });
    const createdAt = (await get(`/agent/runs/${run_id}`)).json().created_at as string;
    const start = later(createdAt, 10);
    const held = { worker_id: 'w-1', execution_id: uuidv4() };
    await runCommand(
      t,
      run_id,
      { type: 'LeaseRun', data: { run_id, ...held, lease_expires_at: later(start, 60) } },
      at(start),
    );
    await runCommand(t, run_id, { type: 'ClaimRun', data: { run_id, ...held } }, at(start));
    await runCommand(t, run_id, { type: 'StartRun', data: { run_id, ...held } }, at(start));
    await runCommand(
      t,
      run_id,
      { type: 'FinishRun', data: { run_id, ...held, state: 'FAILED', status_message: { message: 'tests failed' } } },
      at(later(start, 90)),
    );

    const asOf = (moment: string) => get(`/agent/runs/${run_id}?as_of=${encodeURIComponent(moment)}`);
    expect((await asOf(createdAt)).json()).toMatchObject({ state: 'QUEUED', started_at: null });
    const midway = (await asOf(later(start, 30))).json();
    expect(midway).toMatchObject({ state: 'INPROGRESS', run_time: 'PT30S', is_sandbox_running: true });
    expect(midway).not.toHaveProperty('status_message');
    const offset = new Date(Date.parse(start) + 60_000).toISOString().replace('Z', '+00:00');
    expect((await asOf(offset)).json()).toMatchObject({ state: 'INPROGRESS', run_time: 'PT1M0S' });
    expect((await asOf(later(start, 3600))).json()).toMatchObject({
      state: 'FAILED',
      run_time: 'PT1M30S',
      status_message: { message: 'tests failed' },
    });
  });

  it('answers 404 before the run existed, 400 for a bad date, 404 for a run the caller cannot see', async () => {
    const { run_id } = await newRun(t);
    const createdAt = (await get(`/agent/runs/${run_id}`)).json().created_at as string;
    await expectRefused(t, () => get(`/agent/runs/${run_id}?as_of=${encodeURIComponent(later(createdAt, -1))}`), 404);
    await expectRefused(t, () => get(`/agent/runs/${run_id}?as_of=yesterday`), 400);
    await expectRefused(t, () => get(`/agent/runs/${run_id}?as_of=2026-13-01T00:00:00Z`), 400);
    await expectRefused(t, () => get(`/agent/runs/${run_id}?as_of=${encodeURIComponent(createdAt)}`, outsider), 404);
    await expectRefused(t, () => get(`/agent/runs/${run_id}?when=now`), 400);
  });
});

describe('GET /agent/runs/{runId}/timeline', () => {
  it('lists setup and lifecycle events in order, with the worker’s own entries', async () => {
    const { run_id } = await newRun(t);
    const held = await startRun(t, run_id);
    await runCommand(t, run_id, {
      type: 'RecordTimeline',
      data: { run_id, ...held, name: 'shared_session_started', detail: { url: 'https://x' } },
    });
    await runCommand(t, run_id, {
      type: 'FinishRun',
      data: { run_id, ...held, state: 'BLOCKED', status_message: { message: 'needs approval' } },
    });
    const res = await get(`/agent/runs/${run_id}/timeline`);
    expect(res.statusCode, res.body).toBe(200);
    const events = res.json().events as Array<Record<string, unknown>>;
    expect(events.map((e) => e.event_type)).toEqual([
      'oz_run_created',
      'run_leased',
      'oz_run_claimed',
      'agent_started',
      'shared_session_started',
      'oz_run_blocked',
    ]);
    expect(events[0]).toEqual({
      event_uuid: expect.any(String),
      run_id,
      event_type: 'oz_run_created',
      occurred_at: expect.any(String),
      payload: { source: 'API' },
    });
    expect(events[4]).toMatchObject({ execution_id: held.execution_id, payload: { url: 'https://x' } });
    expect(events[5]).toMatchObject({ payload: { state: 'BLOCKED', status_message: { message: 'needs approval' } } });
    const times = events.map((e) => e.occurred_at as string);
    expect([...times].sort()).toEqual(times);
    await expectRefused(t, () => get(`/agent/runs/${run_id}/timeline`, outsider), 404);
  });
});

describe('GET /agent/runs/{runId}/harness-usage', () => {
  it('is unavailable until a usage snapshot is reported, then the latest snapshot', async () => {
    const { run_id } = await newRun(t);
    expect((await get(`/agent/runs/${run_id}/harness-usage`)).json()).toEqual({
      run_id,
      status: 'unavailable',
      reason: expect.any(String),
      reported_at: null,
      usage: null,
    });
    const held = await startRun(t, run_id);
    for (const total_tokens of [100, 250]) {
      await runCommand(t, run_id, {
        type: 'ReportUsage',
        data: { run_id, ...held, usage: { total_tokens, model_token_usage: [{ model_id: 'gpt-5', total_tokens }] } },
      });
    }
    expect((await get(`/agent/runs/${run_id}/harness-usage`)).json()).toEqual({
      run_id,
      status: 'available',
      reported_at: expect.any(String),
      usage: { total_tokens: 250, model_token_usage: [{ model_id: 'gpt-5', total_tokens: 250 }] },
    });
    await expectRefused(t, () => get(`/agent/runs/${run_id}/harness-usage`, outsider), 404);
  });
});

describe('GET /agent/runs/{runId}/handoff/attachments', () => {
  it('lists the handoff files of the latest ended execution with signed download URLs', async () => {
    const { run_id } = await newRun(t);
    const list = async () =>
      (await get(`/agent/runs/${run_id}/handoff/attachments`)).json().attachments as Array<Record<string, string>>;
    expect(await list()).toEqual([]);

    const first = await startRun(t, run_id);
    const files = [await handoffFile(run_id, first, 'workspace.tar'), await handoffFile(run_id, first, 'notes v2.md')];
    expect(await list()).toEqual([]); // the execution has not ended yet
    await runCommand(t, run_id, {
      type: 'FinishRun',
      data: { run_id, ...first, state: 'SUCCEEDED', status_message: null },
    });
    const listed = await list();
    expect(listed.map(({ download_url: _url, ...a }) => a)).toEqual(
      files.map((f) => ({ attachment_id: f.attachment_id, filename: f.file_name, mime_type: f.mime_type })),
    );
    for (const [i, a] of listed.entries()) {
      expect(signedPath(t, a.download_url)).toMatchObject({ blob: files[i]!.blob, filename: files[i]!.file_name });
    }

    // A new execution is running: the last ended one still hands off; once it ends without files, nothing does.
    await t.call('POST', `/agent/runs/${run_id}/followups`, { message: 'continue' });
    const second = await startRun(t, run_id);
    expect(await list()).toHaveLength(2);
    await runCommand(t, run_id, {
      type: 'FinishRun',
      data: { run_id, ...second, state: 'SUCCEEDED', status_message: null },
    });
    expect(await list()).toEqual([]);
    await expectRefused(t, () => get(`/agent/runs/${run_id}/handoff/attachments`, outsider), 404);
  });
});

describe('GET /agent/run-by-external-reference', () => {
  it('finds the visible run that reported an external reference with exactly that URL', async () => {
    const { run_id } = await newRun(t);
    const held = await startRun(t, run_id);
    const url = `https://linear.app/acme/issue/VIS-${uuidv4()}`;
    await addArtifact(t, run_id, held, {
      artifact_uid: uuidv4(),
      artifact_type: 'EXTERNAL_REFERENCE',
      public: false,
      reference_type: 'linear_issue',
      url,
    });
    const find = (u: string, key?: string) => get(`/agent/run-by-external-reference?url=${encodeURIComponent(u)}`, key);
    expect((await find(url)).json()).toEqual({ run_id });
    await expectRefused(t, () => find(`${url}/`), 404, 'resource_not_found');
    await expectRefused(t, () => find(url, outsider), 404);
    await expectRefused(t, () => get('/agent/run-by-external-reference'), 400);
    await expectRefused(t, () => find('x'.repeat(2049)), 400);
  });

  it('ignores urls of other artifact types', async () => {
    const { run_id } = await newRun(t);
    const held = await startRun(t, run_id);
    const url = `https://github.com/acme/app/pull/${uuidv4()}`;
    await addArtifact(t, run_id, held, {
      artifact_uid: uuidv4(),
      artifact_type: 'PULL_REQUEST',
      public: false,
      url,
      branch: 'b',
    });
    await expectRefused(t, () => get(`/agent/run-by-external-reference?url=${encodeURIComponent(url)}`), 404);
  });
});
