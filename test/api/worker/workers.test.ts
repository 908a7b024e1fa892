/**
 * The worker protocol through the real app: announce, heartbeat and signals, claim by long poll,
 * the reports on a held run, the connected-workers list, and the blob download links.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settle } from '../../helpers/analytics-fixtures.js';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';

const UPLOAD_LIMIT = 4096;

let t: TestApp;
let agentKey: string;
let agentUid: string;

beforeAll(async () => {
  t = await startTestApp({ WORKER_UPLOAD_MAX_BYTES: String(UPLOAD_LIMIT) });
  ({ agentKey, agentUid } = await newAgent(t, 'Runner'));
});
afterAll(() => t.close());

async function newAgent(app: TestApp, name: string, headers: Record<string, string> = {}) {
  const agent = await app.call('POST', '/agent/identities', { name }, undefined, headers);
  expect(agent.statusCode, agent.body).toBe(201);
  const key = await app.call('POST', `/agent/identities/${agent.json().uid}/api-keys`, undefined, undefined, headers);
  return { agentUid: agent.json().uid as string, agentKey: key.json().api_key as string };
}

const announce = async (body: Record<string, unknown> = { host: 'builder-1' }, key = agentKey) => {
  const res = await t.call('POST', '/agent/workers', body, key);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().worker_id as string;
};

const createRun = async (body: Record<string, unknown> = { prompt: 'Fix the flaky test' }) => {
  const res = await t.call('POST', '/agent/runs', body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().run_id as string;
};

const claim = (workerId: string, wait = 0, key = agentKey) =>
  t.call('POST', `/agent/workers/${workerId}/claim?wait_seconds=${wait}`, undefined, key);

/** Claims until `runId` comes up (earlier tests may have left queued runs behind). */
async function claimRun(workerId: string, runId: string) {
  for (let i = 0; i < 50; i++) {
    const res = await claim(workerId);
    expect(res.statusCode, res.body).toBe(200);
    const run = res.json().run;
    if (run.run_id === runId)
      return run as { run_id: string; execution_id: string; attachments: Array<{ download_url: string }> };
  }
  throw new Error(`run ${runId} never came up`);
}

/** Leases every queued run to a worker of its own, so that the next claim sees only new runs. */
const drain = async () => {
  const drainer = await announce({ host: 'drainer' });
  while ((await claim(drainer)).statusCode === 200);
};

const runUrl = (workerId: string, runId: string, what: string) => `/agent/workers/${workerId}/runs/${runId}/${what}`;

/** A report on a held run, from the execution `executionId`. */
const report = (workerId: string, runId: string, executionId: string, what: string, body?: unknown, key = agentKey) =>
  t.call('POST', runUrl(workerId, runId, what), body, key, { 'x-execution-id': executionId });

const upload = (
  workerId: string,
  runId: string,
  executionId: string,
  what: string,
  query: string,
  bytes: Buffer,
  contentType = 'application/octet-stream',
) =>
  t.app.inject({
    method: 'PUT',
    url: `/api/v1${runUrl(workerId, runId, what)}?${query}`,
    headers: { authorization: `Bearer ${agentKey}`, 'x-execution-id': executionId, 'content-type': contentType },
    payload: bytes,
  });

const getRun = async (runId: string) => (await t.call('GET', `/agent/runs/${runId}`)).json();

/** A claimed, started run held by a fresh worker. */
async function runningRun(prompt = 'Do the thing') {
  const workerId = await announce();
  const runId = await createRun({ prompt });
  const run = await claimRun(workerId, runId);
  expect((await report(workerId, runId, run.execution_id, 'claim')).statusCode).toBe(200);
  expect((await report(workerId, runId, run.execution_id, 'start')).statusCode).toBe(200);
  return { workerId, runId, executionId: run.execution_id };
}

describe('who may use the worker API', () => {
  it('takes agent keys only: a user key is 403, no key 401, and nothing is written', async () => {
    await expectRefused(t, () => t.call('POST', '/agent/workers', { host: 'h' }), 403, 'not_authorized');
    await expectRefused(t, () => t.call('POST', '/agent/workers', { host: 'h' }, null), 401);
    const workerId = await announce();
    await expectRefused(t, () => t.call('POST', `/agent/workers/${workerId}/heartbeat`, {}), 403);
    await expectRefused(t, () => t.call('POST', `/agent/workers/${workerId}/claim`), 403);
    const { runId, executionId } = await runningRun();
    await expectRefused(
      t,
      () =>
        t.call('POST', runUrl(workerId, runId, 'finish'), { state: 'SUCCEEDED' }, undefined, {
          'x-execution-id': executionId,
        }),
      403,
    );
  });

  it('keeps teams apart: another team neither sees, heartbeats nor claims for this one', async () => {
    const team = (await t.call('POST', '/teams', { name: 'Other workers' })).json();
    const other = await newAgent(t, 'Foreign', { 'x-service-team-uid': team.uid });
    const workerId = await announce({ host: 'mine', worker_id: 'apart-1' });
    await expectRefused(t, () => t.call('POST', `/agent/workers/${workerId}/heartbeat`, {}, other.agentKey), 404);
    await expectRefused(t, () => t.call('POST', `/agent/workers/${workerId}/claim`, undefined, other.agentKey), 404);
    const foreignWorker = (await t.call('POST', '/agent/workers', { host: 'theirs' }, other.agentKey)).json().worker_id;
    // Runs of this team are not handed to the other team's workers.
    await createRun();
    expect((await t.call('POST', `/agent/workers/${foreignWorker}/claim`, undefined, other.agentKey)).statusCode).toBe(
      204,
    );
    const listed = (
      await t.call('GET', '/agent/connected-self-hosted-workers', undefined, undefined, {
        'x-service-team-uid': team.uid,
      })
    ).json();
    expect(listed.workers.map((w: { worker_id: string }) => w.worker_id)).toEqual([foreignWorker]);
  });

  it('scopes worker ids to their team: another team may announce an id in use here, and learns nothing of it', async () => {
    const team = (await t.call('POST', '/teams', { name: 'Same names' })).json();
    const other = await newAgent(t, 'Namesake', { 'x-service-team-uid': team.uid });
    const theirs = (body: Record<string, unknown>) => t.call('POST', '/agent/workers', body, other.agentKey);
    await announce({ host: 'mine', worker_id: 'shared-name-1' });
    // An id in use by this team and one used nowhere get the same answer.
    const taken = await theirs({ host: 'theirs', worker_id: 'shared-name-1' });
    const free = await theirs({ host: 'theirs', worker_id: 'free-name-1' });
    expect([taken.statusCode, free.statusCode]).toEqual([201, 201]);
    expect({ ...taken.json(), worker_id: 'x' }).toEqual({ ...free.json(), worker_id: 'x' });
    // Each team sees its own worker under that id.
    const hostOf = async (headers: Record<string, string>) =>
      (await t.call('GET', '/agent/connected-self-hosted-workers', undefined, undefined, headers))
        .json()
        .workers.filter((w: { worker_id: string }) => w.worker_id === 'shared-name-1')
        .map((w: { host: string }) => w.host);
    expect(await hostOf({})).toEqual(['mine']);
    expect(await hostOf({ 'x-service-team-uid': team.uid })).toEqual(['theirs']);

    // A run pinned to the id here goes to this team's worker, never to the namesake.
    await drain();
    const runId = await createRun({ prompt: 'pinned here', config: { worker_host: 'shared-name-1' } });
    expect((await claim('shared-name-1', 0, other.agentKey)).statusCode).toBe(204);
    const run = await claimRun('shared-name-1', runId);
    // The namesake holds nothing: told to stop when it says it runs the run, and refused when it reports on it.
    const heartbeat = (key: string) =>
      t.call('POST', '/agent/workers/shared-name-1/heartbeat', { runs: [runId] }, key).then((r) => r.json().signals);
    expect(await heartbeat(other.agentKey)).toEqual([expect.objectContaining({ run_id: runId, cause: 'not_held' })]);
    expect(await heartbeat(agentKey)).toEqual([]);
    await expectRefused(
      t,
      () => report('shared-name-1', runId, run.execution_id, 'claim', undefined, other.agentKey),
      404,
    );
    expect((await report('shared-name-1', runId, run.execution_id, 'claim')).statusCode).toBe(200);
    // Only this team's worker shows the run.
    const runsOf = async (headers: Record<string, string>) =>
      (await t.call('GET', '/agent/connected-self-hosted-workers', undefined, undefined, headers))
        .json()
        .workers.find((w: { worker_id: string }) => w.worker_id === 'shared-name-1').runs;
    expect(await runsOf({})).toEqual([expect.objectContaining({ run_id: runId })]);
    expect(await runsOf({ 'x-service-team-uid': team.uid })).toEqual([]);
  });
});

describe('announce and the connected workers', () => {
  it('announces a worker, lists it for its team, and tells the timings', async () => {
    const res = await t.call('POST', '/agent/workers', { host: 'gpu-box', capabilities: ['docker', 'gpu'] }, agentKey);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({
      worker_id: expect.any(String),
      heartbeat_interval_seconds: 10,
      lease_seconds: 30,
      max_missed_heartbeats: 3,
    });
    const workerId = res.json().worker_id;
    const list = await t.call('GET', '/agent/connected-self-hosted-workers');
    expect(list.statusCode).toBe(200);
    const listed = list.json().workers.find((w: { worker_id: string }) => w.worker_id === workerId);
    expect(listed).toEqual({
      worker_id: workerId,
      host: 'gpu-box',
      capabilities: ['docker', 'gpu'],
      agent_uid: agentUid,
      connected_at: expect.any(String),
      last_heartbeat_at: expect.any(String),
      runs: [],
    });
  });

  it('lets a worker announce again under its own id (a reconnect)', async () => {
    const id = await announce({ host: 'a', worker_id: 'stable-worker' });
    expect(await announce({ host: 'b', worker_id: 'stable-worker', capabilities: ['x'] })).toBe(id);
    const listed = (await t.call('GET', '/agent/connected-self-hosted-workers'))
      .json()
      .workers.filter((w: { worker_id: string }) => w.worker_id === id);
    expect(listed).toMatchObject([{ host: 'b', capabilities: ['x'] }]);
  });

  it('refuses invalid announcements', async () => {
    await expectRefused(t, () => t.call('POST', '/agent/workers', {}, agentKey), 400);
    await expectRefused(
      t,
      () => t.call('POST', '/agent/workers', { host: 'h', worker_id: 'has spaces' }, agentKey),
      400,
    );
    await expectRefused(
      t,
      () =>
        t.call(
          'POST',
          '/agent/workers',
          { host: 'h', capabilities: Array.from({ length: 51 }, (_, i) => `c${i}`) },
          agentKey,
        ),
      400,
    );
    await expectRefused(t, () => t.call('POST', '/agent/workers', { host: 'h', extra: 1 }, agentKey), 400);
  });

  it('keeps at most 100 connected workers per team (409 limit_exceeded); a known one may reconnect', async () => {
    const team = (await t.call('POST', '/teams', { name: 'Crowded' })).json();
    const crowd = await newAgent(t, 'Crowd', { 'x-service-team-uid': team.uid });
    for (let i = 0; i < 100; i++)
      expect(
        (await t.call('POST', '/agent/workers', { host: 'h', worker_id: `crowd-${i}` }, crowd.agentKey)).statusCode,
      ).toBe(201);
    await expectRefused(
      t,
      () => t.call('POST', '/agent/workers', { host: 'h' }, crowd.agentKey),
      409,
      'limit_exceeded',
    );
    expect(
      (await t.call('POST', '/agent/workers', { host: 'again', worker_id: 'crowd-7' }, crowd.agentKey)).statusCode,
    ).toBe(201);
  });

  it('answers 404 to a worker it does not know, so the worker announces again', async () => {
    await expectRefused(
      t,
      () => t.call('POST', '/agent/workers/never-announced/heartbeat', {}, agentKey),
      404,
      'resource_not_found',
    );
    await expectRefused(t, () => claim('never-announced'), 404);
  });
});

describe('claiming runs', () => {
  it('hands out a queued run with everything the worker needs, then 204 when none is left', async () => {
    const workerId = await announce();
    await drain();
    const runId = await createRun({
      prompt: 'Write the release notes',
      title: 'Release notes',
      mode: 'plan',
      config: { model_id: 'gpt-5-4-mini' },
      attachments: [
        { file_name: 'shot.png', mime_type: 'image/png', data: Buffer.from('png bytes').toString('base64') },
      ],
    });
    // A follow-up while queued joins the prompt.
    expect(
      (await t.call('POST', `/agent/runs/${runId}/followups`, { message: 'Mention the new CLI' })).statusCode,
    ).toBe(200);
    const run = await claimRun(workerId, runId);
    expect(run).toMatchObject({
      run_id: runId,
      worker_id: workerId,
      execution_id: expect.any(String),
      state: 'PENDING',
      lease_expires_at: expect.any(String),
      title: 'Release notes',
      prompt: 'Write the release notes\n\nMention the new CLI',
      mode: 'plan',
      resumed: false,
      conversation_id: expect.any(String),
      config: { model_id: 'gpt-5-4-mini' },
      attachments: [
        {
          attachment_id: expect.any(String),
          file_name: 'shot.png',
          mime_type: 'image/png',
          size_bytes: 9,
          download_url: expect.any(String),
        },
      ],
    });
    const link = new URL(run.attachments[0]!.download_url);
    const download = await t.app.inject({ method: 'GET', url: link.pathname + link.search });
    expect(download.statusCode).toBe(200);
    expect(download.body).toBe('png bytes');
    expect(download.headers['content-type']).toBe('image/png');
    expect((await getRun(runId)).state).toBe('PENDING');
    // The lease shows on the worker's entry.
    const listed = (await t.call('GET', '/agent/connected-self-hosted-workers'))
      .json()
      .workers.find((w: { worker_id: string }) => w.worker_id === workerId);
    expect(listed.runs).toEqual([{ run_id: runId, execution_id: run.execution_id, state: 'PENDING' }]);
    await drain();
    expect((await claim(workerId)).statusCode).toBe(204);
  });

  it('refuses a wait longer than 30 seconds', async () => {
    const workerId = await announce();
    await expectRefused(t, () => claim(workerId, 31), 400);
    await expectRefused(t, () => claim(workerId, -1), 400);
  });

  it('wakes a waiting claim as soon as a run is queued', async () => {
    const workerId = await announce();
    await drain();
    const started = Date.now();
    const waiting = claim(workerId, 20);
    const runId = await createRun({ prompt: 'wake up' });
    const res = await waiting;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().run.run_id).toBe(runId);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('never hands one run to two workers, however many claim at once', async () => {
    const workers = await Promise.all(Array.from({ length: 6 }, (_, i) => announce({ host: `racer-${i}` })));
    await drain();
    const runIds = await Promise.all(Array.from({ length: 4 }, (_, i) => createRun({ prompt: `race ${i}` })));
    const results = await Promise.all(workers.flatMap((w) => [claim(w), claim(w)]));
    const claimed = results.filter((r) => r.statusCode === 200).map((r) => r.json().run.run_id as string);
    expect(results.every((r) => r.statusCode === 200 || r.statusCode === 204)).toBe(true);
    expect(claimed.sort()).toEqual([...runIds].sort());
    for (const runId of runIds) {
      const leases = (await t.rt.events.readStream(`run-${runId}`)).filter((e) => e.type === 'RunLeased');
      expect(leases).toHaveLength(1);
    }
  });

  it('hands a run pinned to a worker (config.worker_host) to that worker only', async () => {
    const pinned = await announce({ host: 'h', worker_id: 'the-chosen-one' });
    const other = await announce();
    await drain();
    const runId = await createRun({ prompt: 'pinned', config: { worker_host: 'the-chosen-one' } });
    expect((await claim(other)).statusCode).toBe(204);
    expect((await claim(pinned)).json().run.run_id).toBe(runId);
  });
});

describe('reports on a held run', () => {
  it('moves the run through CLAIMED and INPROGRESS to SUCCEEDED with everything it reports', async () => {
    const workerId = await announce();
    const runId = await createRun({ prompt: 'Ship it' });
    const { execution_id: x } = await claimRun(workerId, runId);

    const ack = await report(workerId, runId, x, 'claim');
    expect(ack.statusCode, ack.body).toBe(200);
    expect(ack.json().run).toMatchObject({
      run_id: runId,
      execution_id: x,
      state: 'CLAIMED',
      prompt: 'Ship it',
      lease_expires_at: null,
    });
    expect((await getRun(runId)).state).toBe('CLAIMED');
    expect((await report(workerId, runId, x, 'start')).json()).toEqual({ run_id: runId, state: 'INPROGRESS' });
    expect((await getRun(runId)).state).toBe('INPROGRESS');

    const timeline = await t.call(
      'POST',
      runUrl(workerId, runId, 'timeline'),
      { name: 'sandbox_ready', detail: { image: 'node:20' } },
      agentKey,
      { 'x-execution-id': x, 'x-correlation-id': 'corr-42' },
    );
    expect(timeline.statusCode).toBe(201);
    const message = await report(workerId, runId, x, 'messages', {
      role: 'assistant',
      step_id: 'step-1',
      content: [
        { type: 'text', text: 'Running the tests' },
        { type: 'action', id: 'a1', category: 'command', name: 'shell', input: { command: 'npm test' } },
        {
          type: 'action_result',
          action_id: 'a1',
          category: 'command',
          name: 'shell',
          state: 'completed',
          output: 'ok',
        },
        { type: 'event', name: 'checkpoint', data: { n: 1 } },
      ],
    });
    expect(message.statusCode, message.body).toBe(201);
    expect(message.json()).toMatchObject({
      message_id: expect.any(String),
      step_id: 'step-1',
      parent_step_id: null,
      role: 'assistant',
    });

    const pr = await report(workerId, runId, x, 'artifacts', {
      artifact_type: 'PULL_REQUEST',
      url: 'https://github.com/acme/app/pull/7',
      branch: 'fix/flaky',
    });
    expect(pr.statusCode, pr.body).toBe(201);
    expect(pr.json()).toEqual({
      artifact_uid: expect.any(String),
      artifact_type: 'PULL_REQUEST',
      url: 'https://github.com/acme/app/pull/7',
      branch: 'fix/flaky',
      public: false,
    });
    const plan = await report(workerId, runId, x, 'artifacts', {
      artifact_type: 'PLAN',
      title: 'The plan',
      content: '# Steps',
    });
    expect(plan.json()).toMatchObject({
      artifact_type: 'PLAN',
      title: 'The plan',
      document_uid: plan.json().artifact_uid,
    });
    const ref = await report(workerId, runId, x, 'artifacts', {
      artifact_type: 'EXTERNAL_REFERENCE',
      reference_type: 'linear_issue',
      url: 'https://linear.app/acme/issue/ENG-1',
      metadata: { key: 'ENG-1' },
    });
    expect(ref.statusCode, ref.body).toBe(201);

    const file = await upload(
      workerId,
      runId,
      x,
      'files',
      'filename=report.txt&mime_type=text/plain&title=Report',
      Buffer.from('all green\n'),
    );
    expect(file.statusCode, file.body).toBe(201);
    expect(file.json()).toEqual({
      artifact_uid: expect.any(String),
      artifact_type: 'FILE',
      public: false,
      filename: 'report.txt',
      filepath: 'report.txt',
      mime_type: 'text/plain',
      size_bytes: 10,
      title: 'Report',
    });
    const shot = await upload(
      workerId,
      runId,
      x,
      'files',
      'filename=screen.png&mime_type=image/png&artifact_type=SCREENSHOT&public=true',
      Buffer.from('png'),
    );
    expect(shot.json()).toMatchObject({ artifact_type: 'SCREENSHOT', public: true });

    const usage = {
      total_tokens: 1234,
      inference_cost_usd: 0.12,
      model_token_usage: [
        { model_id: 'gpt-x', usage_type: 'warp', total_tokens: 1234, tokens_by_category: { input: 1000, output: 234 } },
      ],
    };
    expect((await report(workerId, runId, x, 'usage', usage)).statusCode).toBe(200);
    const handoff = await upload(
      workerId,
      runId,
      x,
      'handoff',
      'filename=state.tar&mime_type=application/x-tar',
      Buffer.from('tarball'),
    );
    expect(handoff.statusCode, handoff.body).toBe(201);
    expect(handoff.json()).toEqual({
      run_id: runId,
      attachment_id: expect.any(String),
      file_name: 'state.tar',
      mime_type: 'application/x-tar',
      size_bytes: 7,
    });

    const finished = await report(workerId, runId, x, 'finish', { state: 'SUCCEEDED', status_message: 'All done' });
    expect(finished.json()).toEqual({ run_id: runId, state: 'SUCCEEDED', status_message: { message: 'All done' } });

    await settle(t); // the cost ledger prices the usage and the execution
    const item = await getRun(runId);
    expect(item).toMatchObject({ state: 'SUCCEEDED', status_message: { message: 'All done' } });
    // Priced by the server at the catalogue, which lacks gpt-x: its tokens count, unpriced.
    expect(item.request_usage).toMatchObject({
      inference_cost_usd: 0,
      total_tokens: 1234,
      model_token_usage: usage.model_token_usage,
    });
    expect(item.artifacts.map((a: { artifact_type: string }) => a.artifact_type).sort()).toEqual([
      'EXTERNAL_REFERENCE',
      'FILE',
      'PLAN',
      'PULL_REQUEST',
      'SCREENSHOT',
    ]);

    // The file downloads through its signed link.
    const fileArtifact = (await t.call('GET', `/agent/artifacts/${file.json().artifact_uid}`)).json();
    const link = new URL(fileArtifact.data.download_url);
    const download = await t.app.inject({ method: 'GET', url: link.pathname + link.search });
    expect(download.statusCode).toBe(200);
    expect(download.body).toBe('all green\n');
    expect(download.headers['content-type']).toBe('text/plain');
    expect(download.headers['content-disposition']).toBe(
      `attachment; filename="report.txt"; filename*=UTF-8''report.txt`,
    );

    // The message and the timeline entry are in the run's history.
    const history = await t.rt.events.readStream(`run-${runId}`);
    expect(history.find((e) => e.type === 'RunTimelineRecorded')!.metadata).toMatchObject({
      correlation_id: 'corr-42',
      actor: { type: 'agent', uid: agentUid },
    });
    const types = history.map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining([
        'RunTimelineRecorded',
        'RunMessageRecorded',
        'RunUsageReported',
        'RunHandoffFileAdded',
        'RunFinished',
      ]),
    );
    // The run has left its worker.
    const listed = (await t.call('GET', '/agent/connected-self-hosted-workers'))
      .json()
      .workers.find((w: { worker_id: string }) => w.worker_id === workerId);
    expect(listed.runs).toEqual([]);
  });

  it('hears only the execution that holds the run: anything else is 409 not_claimed and writes nothing', async () => {
    const { workerId, runId, executionId } = await runningRun();
    const intruder = await announce();
    await expectRefused(
      t,
      () =>
        report(workerId, runId, 'another-execution', 'messages', {
          role: 'assistant',
          content: [{ type: 'text', text: 'hi' }],
        }),
      409,
      'not_claimed',
    );
    await expectRefused(
      t,
      () => report(intruder, runId, executionId, 'finish', { state: 'SUCCEEDED' }),
      409,
      'not_claimed',
    );
    await expectRefused(
      t,
      () => upload(workerId, runId, 'another-execution', 'files', 'filename=x.txt', Buffer.from('x')),
      409,
      'not_claimed',
    );
    await expectRefused(
      t,
      () => upload(workerId, runId, 'another-execution', 'handoff', 'filename=x.txt', Buffer.from('x')),
      409,
      'not_claimed',
    );
    // Acknowledging or starting twice is out of order.
    await expectRefused(t, () => report(workerId, runId, executionId, 'claim'), 409, 'not_claimed');
    await expectRefused(t, () => report(workerId, runId, executionId, 'start'), 409, 'not_claimed');
    expect(
      (
        await report(workerId, runId, executionId, 'finish', {
          state: 'FAILED',
          status_message: { message: 'exit 1', error_code: 'agent_process_failed' },
        })
      ).statusCode,
    ).toBe(200);
    // A finished run takes no more reports.
    await expectRefused(
      t,
      () => report(workerId, runId, executionId, 'timeline', { name: 'late' }),
      409,
      'not_claimed',
    );
    await expectRefused(t, () => report(workerId, 'no-such-run', executionId, 'start'), 404);
  });

  it('refuses malformed reports without writing', async () => {
    const { workerId, runId, executionId: x } = await runningRun();
    const bad = (what: string, body: unknown) => expectRefused(t, () => report(workerId, runId, x, what, body), 400);
    await expectRefused(t, () => t.call('POST', runUrl(workerId, runId, 'start'), undefined, agentKey), 400);
    await bad('timeline', { detail: {} });
    await bad('messages', { role: 'robot', content: [{ type: 'text', text: 'x' }] });
    await bad('messages', { role: 'assistant', content: [] });
    await bad('messages', { role: 'assistant', content: [{ type: 'image', url: 'x' }] });
    await bad('messages', {
      role: 'assistant',
      content: [{ type: 'action', id: 'a', category: 'painting', name: 'n' }],
    });
    await bad('messages', {
      role: 'assistant',
      content: Array.from({ length: 201 }, () => ({ type: 'text', text: 'x' })),
    });
    await bad('artifacts', { artifact_type: 'VIDEO', url: 'https://x.dev' });
    await bad('artifacts', { artifact_type: 'PULL_REQUEST', url: 'not a url' });
    await bad('artifacts', { artifact_type: 'PULL_REQUEST', url: 'ftp://host/pull/1' });
    await bad('artifacts', { artifact_type: 'EXTERNAL_REFERENCE', reference_type: 'Bad Type', url: 'https://x.dev' });
    await bad('artifacts', { artifact_type: 'PLAN', content: 'x'.repeat(256 * 1024 + 1) });
    await bad('artifacts', {
      artifact_type: 'EXTERNAL_REFERENCE',
      reference_type: 'doc',
      url: 'https://x.dev',
      metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])),
    });
    await bad('usage', { model_token_usage: Array.from({ length: 51 }, () => ({ model_id: 'm', total_tokens: 1 })) });
    await bad('usage', { total_tokens: -1 });
    await bad('usage', { surprise: 1 });
    await bad('finish', { state: 'CANCELLED' });
    await bad('finish', { state: 'FAILED', status_message: { message: 'x', error_code: 'Not-Snake' } });
    await expectRefused(t, () => upload(workerId, runId, x, 'files', 'filename=../etc/passwd', Buffer.from('x')), 400);
    await expectRefused(t, () => upload(workerId, runId, x, 'files', 'mime_type=text/plain', Buffer.from('x')), 400);
    await expectRefused(
      t,
      () =>
        upload(
          workerId,
          runId,
          x,
          'files',
          'filename=a.txt&artifact_type=SCREENSHOT&mime_type=text/plain',
          Buffer.from('x'),
        ),
      400,
    );
    await expectRefused(
      t,
      () => upload(workerId, runId, x, 'files', 'filename=a.json', Buffer.from('{"a":1}'), 'application/json'),
      415,
    );
  });

  it(`refuses an upload over the limit with 413 (${UPLOAD_LIMIT} bytes here)`, async () => {
    const { workerId, runId, executionId: x } = await runningRun();
    expect(
      (await upload(workerId, runId, x, 'files', 'filename=fits.bin', Buffer.alloc(UPLOAD_LIMIT))).statusCode,
    ).toBe(201);
    await expectRefused(
      t,
      () => upload(workerId, runId, x, 'files', 'filename=big.bin', Buffer.alloc(UPLOAD_LIMIT + 1)),
      413,
      'payload_too_large',
    );
    await expectRefused(
      t,
      () => upload(workerId, runId, x, 'handoff', 'filename=big.bin', Buffer.alloc(UPLOAD_LIMIT + 1)),
      413,
    );
  });
});

describe('signals', () => {
  const heartbeat = async (workerId: string, runs: string[], acks: string[] = []) => {
    const res = await t.call('POST', `/agent/workers/${workerId}/heartbeat`, { runs, acks }, agentKey);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().signals as Array<Record<string, unknown> & { signal_id: string; type: string }>;
  };

  it('delivers follow-ups and interrupts to the execution until acknowledged', async () => {
    const { workerId, runId, executionId } = await runningRun();
    expect(await heartbeat(workerId, [runId])).toEqual([]);
    const followup = await t.call('POST', `/agent/runs/${runId}/followups`, { message: 'Also update the docs' });
    expect(followup.json().routed_to).toBe('live_execution');
    expect((await t.call('POST', `/agent/runs/${runId}/interrupt`)).statusCode).toBe(202);

    const signals = await heartbeat(workerId, [runId]);
    expect(signals).toEqual([
      {
        signal_id: expect.any(String),
        type: 'followup',
        run_id: runId,
        execution_id: executionId,
        message: 'Also update the docs',
        mode: null,
        attachments: [],
      },
      { signal_id: expect.any(String), type: 'interrupt', run_id: runId, execution_id: executionId },
    ]);
    // Unacknowledged signals come again; acknowledged ones do not.
    expect(await heartbeat(workerId, [runId])).toEqual(signals);
    expect(await heartbeat(workerId, [runId], [signals[0]!.signal_id])).toEqual([signals[1]]);
    expect(await heartbeat(workerId, [runId], [signals[1]!.signal_id])).toEqual([]);
  });

  it('tells the worker to stop a cancelled run, and a run it does not hold', async () => {
    const { workerId, runId, executionId } = await runningRun();
    expect((await t.call('POST', `/agent/runs/${runId}/cancel`)).statusCode).toBe(200);
    const [stop] = await heartbeat(workerId, [runId]);
    expect(stop).toEqual({
      signal_id: expect.any(String),
      type: 'cancel',
      run_id: runId,
      execution_id: executionId,
      cause: 'cancelled',
      reason: expect.any(String),
    });
    // Once the worker stops reporting the run, the signal goes.
    expect(await heartbeat(workerId, [])).toEqual([]);
    const other = await createRun();
    expect(await heartbeat(workerId, [other])).toEqual([
      {
        signal_id: `not-held:${other}`,
        type: 'cancel',
        run_id: other,
        execution_id: null,
        cause: 'not_held',
        reason: expect.any(String),
      },
    ]);
    expect(await heartbeat(workerId, [other], [`not-held:${other}`])).toEqual([]);
  });

  it('refuses oversized heartbeats', async () => {
    const workerId = await announce();
    await expectRefused(
      t,
      () =>
        t.call(
          'POST',
          `/agent/workers/${workerId}/heartbeat`,
          { runs: Array.from({ length: 101 }, (_, i) => `r${i}`) },
          agentKey,
        ),
      400,
    );
    await expectRefused(
      t,
      () =>
        t.call(
          'POST',
          `/agent/workers/${workerId}/heartbeat`,
          { acks: Array.from({ length: 1001 }, (_, i) => `s${i}`) },
          agentKey,
        ),
      400,
    );
  });
});

describe('blob download links', () => {
  const blob = async () => t.rt.blobs.put(Buffer.from('secret report'));
  const path = (url: string) => new URL(url).pathname + new URL(url).search;

  it('serves a file with a valid link, and 403 for a tampered, unsigned or expired one', async () => {
    const id = await blob();
    const { url } = t.rt.urls.sign(`/api/v1/blobs/${id}?filename=r%201.txt&mime=text/plain`, 60);
    const ok = await t.app.inject({ method: 'GET', url: path(url) });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe('secret report');
    expect(ok.headers).toMatchObject({
      'content-type': 'text/plain',
      'x-content-type-options': 'nosniff',
      'content-disposition': `attachment; filename="r 1.txt"; filename*=UTF-8''r%201.txt`,
    });

    expectProblem(
      await t.app.inject({ method: 'GET', url: path(url).replace('r%201.txt', 'other.txt') }),
      403,
      'invalid_signature',
    );
    expectProblem(
      await t.app.inject({ method: 'GET', url: path(url).replace('mime=text/plain', 'mime=text/html') }),
      403,
      'invalid_signature',
    );
    expectProblem(
      await t.app.inject({ method: 'GET', url: `/api/v1/blobs/${id}?filename=r.txt` }),
      403,
      'invalid_signature',
    );
    const expired = t.rt.urls.sign(`/api/v1/blobs/${id}?filename=r.txt`, -1).url;
    expectProblem(await t.app.inject({ method: 'GET', url: path(expired) }), 403, 'invalid_signature');
    const missing = t.rt.urls.sign(`/api/v1/blobs/${'0'.repeat(64)}?filename=r.txt`, 60).url;
    expectProblem(await t.app.inject({ method: 'GET', url: path(missing) }), 404);
  });

  it('serves octet-stream when no type is named, and never an invalid one', async () => {
    const id = await blob();
    const plain = await t.app.inject({ method: 'GET', url: path(t.rt.urls.sign(`/api/v1/blobs/${id}`, 60).url) });
    expect(plain.headers['content-type']).toBe('application/octet-stream');
    expect(plain.headers['content-disposition']).toBe('attachment');
    const odd = await t.app.inject({
      method: 'GET',
      url: path(t.rt.urls.sign(`/api/v1/blobs/${id}?mime=not-a-type`, 60).url),
    });
    expect(odd.headers['content-type']).toBe('application/octet-stream');
  });
});

describe('the OpenAPI document', () => {
  it('describes the worker protocol', async () => {
    const doc = (await t.call('GET', '/openapi.json', undefined, null)).json();
    for (const path of [
      '/api/v1/agent/workers',
      '/api/v1/agent/workers/{worker_id}/claim',
      '/api/v1/agent/workers/{worker_id}/runs/{run_id}/messages',
      '/api/v1/agent/connected-self-hosted-workers',
      '/api/v1/blobs/{blob}',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
  });
});
