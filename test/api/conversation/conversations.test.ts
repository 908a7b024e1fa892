import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';
import {
  addArtifact,
  finishRun,
  newRun,
  outsiderKey,
  say,
  signedPath,
  startRun,
  teammateKey,
} from '../../helpers/conversation-fixtures.js';

let t: TestApp;
let outsider: string;
let teammate: string;
beforeAll(async () => {
  t = await startTestApp();
  outsider = await outsiderKey(t);
  teammate = await teammateKey(t);
});
afterAll(() => t.close());

const png = Buffer.from('89504e470d0a1a0a', 'hex');

describe('normalized conversations', () => {
  it('shows a run’s turns: the prompt, the worker’s blocks and steps, and a resumed turn', async () => {
    const { run_id, conversation_id } = await newRun(t, { prompt: 'Fix the build' });
    const queued = await t.call('POST', `/agent/conversations/${conversation_id}/followups`, {
      message: 'and the tests',
      mode: 'plan',
    });
    expect(queued.statusCode, queued.body).toBe(200);
    expect(queued.json()).toEqual({ conversation_id, run_id, state: 'QUEUED' });

    const held = await startRun(t, run_id);
    await say(t, run_id, held, { text: 'Looking', message_id: 'm-1' });
    await say(t, run_id, held, { text: 'Found it', message_id: 'm-2' });
    await say(t, run_id, held, { text: 'npm test', step_id: 'build', message_id: 'm-3' });
    await say(t, run_id, held, {
      role: 'tool',
      text: 'ok',
      step_id: 'test',
      parent_step_id: 'build',
      message_id: 'm-4',
    });
    await finishRun(t, run_id, held, 'SUCCEEDED', 'Fixed');
    const resumed = await t.call('POST', `/agent/conversations/${conversation_id}/followups`, {
      message: 'Now the docs',
    });
    expect(resumed.json()).toMatchObject({ run_id, state: 'QUEUED' });

    const res = await t.call('GET', `/agent/conversations/${conversation_id}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.conversation_id).toBe(conversation_id);
    expect(body.steps).toHaveLength(2);
    const [first, second] = body.steps;
    expect(first).toMatchObject({
      id: expect.any(String),
      description: 'Fix the build',
      summary: 'Fixed',
      started_at: expect.any(String),
      completed_at: expect.any(String),
    });
    expect(
      first.messages.map((m: { role: string; content: Array<{ text: string }> }) => [
        m.role,
        m.content.map((c) => c.text),
      ]),
    ).toEqual([
      ['user', ['Fix the build', 'and the tests']],
      ['assistant', ['Looking', 'Found it']],
    ]);
    expect(first.messages[1].message_ids).toEqual(['m-1', 'm-2']);
    expect(first.steps).toMatchObject([
      {
        id: 'build',
        messages: [{ role: 'assistant', message_ids: ['m-3'] }],
        steps: [{ id: 'test', messages: [{ role: 'tool' }] }],
      },
    ]);
    expect(second).toMatchObject({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Now the docs' }] }],
      steps: [],
    });
    expect(second.started_at).toBeUndefined();

    // The run's own view is the same here: the conversation has one run.
    expect((await t.call('GET', `/agent/runs/${run_id}/conversation`)).json()).toEqual(body);
  });

  it('shows every run of a conversation, while a run shows its own turns only', async () => {
    const first = await newRun(t, { prompt: 'One' });
    const second = await newRun(t, { prompt: 'Two', conversation_id: first.conversation_id });
    const all = (await t.call('GET', `/agent/conversations/${first.conversation_id}`)).json();
    expect(all.steps.map((s: { description: string }) => s.description)).toEqual(['One', 'Two']);
    const own = (await t.call('GET', `/agent/runs/${second.run_id}/conversation`)).json();
    expect(own).toMatchObject({ conversation_id: first.conversation_id, steps: [{ description: 'Two' }] });
    expect(own.steps).toHaveLength(1);
  });

  it('is 404 to whoever cannot view the (newest) run, and for unknown ids', async () => {
    const team = await newRun(t);
    const personal = await newRun(t, { team: false });
    for (const path of [
      `/agent/conversations/${team.conversation_id}`,
      `/agent/runs/${team.run_id}/conversation`,
      `/agent/conversations/${team.conversation_id}/transcript`,
      `/agent/runs/${team.run_id}/transcript`,
      `/agent/conversations/${team.conversation_id}/block-snapshot`,
    ]) {
      expectProblem(await t.call('GET', path, undefined, outsider), 404, 'resource_not_found');
      expect((await t.call('GET', path, undefined, teammate)).statusCode).toBeLessThan(400);
    }
    expectProblem(await t.call('GET', `/agent/conversations/${personal.conversation_id}`, undefined, teammate), 404);
    expectProblem(await t.call('GET', `/agent/runs/${personal.run_id}/conversation`, undefined, teammate), 404);
    expect((await t.call('GET', `/agent/conversations/${personal.conversation_id}`)).statusCode).toBe(200);
    expectProblem(await t.call('GET', '/agent/conversations/nope'), 404);
    expectProblem(await t.call('GET', '/agent/runs/nope/conversation'), 404);
    expectProblem(await t.call('GET', `/agent/conversations/${team.conversation_id}`, undefined, null), 401);
  });
});

describe('transcripts and snapshots', () => {
  it('redirects to a signed JSON transcript of the run or the conversation', async () => {
    const { run_id, conversation_id } = await newRun(t, { prompt: 'Hello' });
    const held = await startRun(t, run_id);
    await say(t, run_id, held, { text: 'Hi', step_id: 's', message_id: 'm-hi' });
    for (const [path, runId] of [
      [`/agent/runs/${run_id}/transcript`, run_id],
      [`/agent/conversations/${conversation_id}/transcript`, undefined],
    ] as const) {
      const res = await t.call('GET', path);
      expect(res.statusCode, res.body).toBe(302);
      const link = signedPath(t, res.headers.location as string);
      expect(link.url.pathname).toMatch(/^\/api\/v1\/blobs\/[0-9a-f]{64}$/);
      expect(res.headers.location).toContain('?filename=transcript.json&mime=application/json&expires=');
      const transcript = JSON.parse((await t.rt.blobs.read(link.blob))!.toString('utf8'));
      expect(transcript).toMatchObject({ conversation_id, ...(runId ? { run_id: runId } : {}) });
      expect(transcript.messages).toMatchObject([
        { role: 'user', run_id, content: [{ type: 'text', text: 'Hello' }], step_id: null },
        {
          role: 'assistant',
          run_id,
          message_id: 'm-hi',
          step_id: 's',
          parent_step_id: null,
          timestamp: expect.any(String),
        },
      ]);
    }
  });

  it('redirects to a signed block snapshot, or answers the URL as JSON with redirect=false', async () => {
    const { conversation_id } = await newRun(t, { prompt: 'Snap' });
    const res = await t.call('GET', `/agent/conversations/${conversation_id}/block-snapshot`);
    expect(res.statusCode).toBe(302);
    const link = signedPath(t, res.headers.location as string);
    expect(link).toMatchObject({ filename: 'block-snapshot.json', mime: 'application/json' });
    const snapshot = JSON.parse((await t.rt.blobs.read(link.blob))!.toString('utf8'));
    expect(snapshot).toEqual((await t.call('GET', `/agent/conversations/${conversation_id}`)).json());

    const json = await t.call('GET', `/agent/conversations/${conversation_id}/block-snapshot?redirect=false`);
    expect(json.statusCode).toBe(200);
    expect(json.json()).toEqual({ url: expect.stringContaining('/api/v1/blobs/'), expires_at: expect.any(String) });
    expect(Date.parse(json.json().expires_at)).toBeGreaterThan(Date.now());
    expectProblem(await t.call('GET', `/agent/conversations/${conversation_id}/block-snapshot?redirect=maybe`), 400);
  });

  it('redirects to a screenshot of the conversation, and to nothing else', async () => {
    const { run_id, conversation_id } = await newRun(t);
    const other = await newRun(t);
    const held = await startRun(t, run_id);
    const blob = await t.rt.blobs.put(png);
    await addArtifact(t, run_id, held, {
      artifact_uid: 'b5f0c2de-0000-4000-8000-000000000001',
      artifact_type: 'SCREENSHOT',
      public: false,
      mime_type: 'image/png',
      blob,
    });
    await addArtifact(t, run_id, held, {
      artifact_uid: 'b5f0c2de-0000-4000-8000-000000000002',
      artifact_type: 'FILE',
      public: false,
      filename: 'x.txt',
      mime_type: 'text/plain',
      blob,
    });
    const res = await t.call(
      'GET',
      `/agent/conversations/${conversation_id}/screenshots/b5f0c2de-0000-4000-8000-000000000001/download`,
    );
    expect(res.statusCode, res.body).toBe(302);
    expect(signedPath(t, res.headers.location as string)).toMatchObject({
      blob,
      filename: 'b5f0c2de-0000-4000-8000-000000000001.png',
      mime: 'image/png',
    });

    expectProblem(
      await t.call(
        'GET',
        `/agent/conversations/${other.conversation_id}/screenshots/b5f0c2de-0000-4000-8000-000000000001/download`,
      ),
      404,
    );
    expectProblem(
      await t.call(
        'GET',
        `/agent/conversations/${conversation_id}/screenshots/b5f0c2de-0000-4000-8000-000000000002/download`,
      ),
      404,
    );
    expectProblem(await t.call('GET', `/agent/conversations/${conversation_id}/screenshots/nope/download`), 404);
    expectProblem(
      await t.call(
        'GET',
        `/agent/conversations/${conversation_id}/screenshots/b5f0c2de-0000-4000-8000-000000000001/download`,
        undefined,
        outsider,
      ),
      404,
    );
  });
});

describe('public redirect checks', () => {
  it('names the conversation once the session’s newest run has finished, and the session while a run is in progress', async () => {
    const { run_id, conversation_id } = await newRun(t);
    const session = () => t.call('GET', `/agent/sessions/${conversation_id}/redirect`, undefined, null);
    const live = () => t.call('GET', `/agent/conversations/${conversation_id}/redirect`, undefined, null);
    expect((await session()).json()).toEqual({});
    expect((await live()).json()).toEqual({});
    const held = await startRun(t, run_id);
    expect((await live()).json()).toEqual({ session_id: conversation_id });
    expect((await session()).json()).toEqual({});
    await finishRun(t, run_id, held);
    expect((await session()).json()).toEqual({ conversation_id });
    expect((await live()).json()).toEqual({});
    // A newer run that has not finished: the session is not finished either.
    await newRun(t, { conversation_id });
    expect((await session()).json()).toEqual({});
    expect((await t.call('GET', '/agent/sessions/unknown/redirect', undefined, null)).json()).toEqual({});
    expect((await t.call('GET', '/agent/conversations/unknown/redirect', undefined, null)).json()).toEqual({});
  });
});

describe('follow-ups, interrupts and attachments by conversation', () => {
  const attachment = { file_name: 'shot.png', mime_type: 'image/png', data: png.toString('base64') };

  it('routes a follow-up to the newest run, with attachments prepared for it', async () => {
    const first = await newRun(t);
    const prepared = await t.call('POST', `/agent/conversations/${first.conversation_id}/attachments`, attachment);
    expect(prepared.statusCode, prepared.body).toBe(201);
    expect(prepared.json()).toEqual({
      attachment_id: expect.any(String),
      run_id: first.run_id,
      conversation_id: first.conversation_id,
      file_name: 'shot.png',
      mime_type: 'image/png',
      size_bytes: png.length,
    });
    const viaRun = await t.call('POST', `/agent/runs/${first.run_id}/attachments`, attachment);
    expect(viaRun.statusCode, viaRun.body).toBe(201);
    const ids = [prepared.json().attachment_id, viaRun.json().attachment_id];

    const held = await startRun(t, first.run_id);
    const ok = await t.call('POST', `/agent/conversations/${first.conversation_id}/followups`, {
      message: 'see these',
      attachments: ids,
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toEqual({ conversation_id: first.conversation_id, run_id: first.run_id, state: 'INPROGRESS' });
    const [delivered] = await t.rt.events.readStream(`run-${first.run_id}`, { direction: 'backwards', maxCount: 1 });
    expect(delivered).toMatchObject({
      type: 'RunFollowupDelivered',
      data: { message: 'see these', attachments: ids, execution_id: held.execution_id, to: 'execution' },
    });

    // A newer run in the conversation: attachments prepared for the older one are unknown now.
    const second = await newRun(t, { conversation_id: first.conversation_id });
    await expectRefused(
      t,
      () =>
        t.call('POST', `/agent/conversations/${first.conversation_id}/followups`, {
          message: 'again',
          attachments: [ids[0]],
        }),
      422,
      'unknown_attachment',
    );
    await expectRefused(
      t,
      () =>
        t.call('POST', `/agent/conversations/${first.conversation_id}/followups`, {
          message: 'again',
          attachments: ['never-prepared'],
        }),
      422,
      'unknown_attachment',
    );
    const plain = await t.call('POST', `/agent/conversations/${first.conversation_id}/followups`, {
      message: 'again',
      mode: 'orchestrate',
    });
    expect(plain.json()).toMatchObject({ run_id: second.run_id, state: 'QUEUED' });
    const [extended] = await t.rt.events.readStream(`run-${second.run_id}`, { direction: 'backwards', maxCount: 1 });
    expect(extended).toMatchObject({ type: 'RunPromptExtended', data: { message: 'again', mode: 'orchestrate' } });
  });

  it('refuses invalid bodies, unknown conversations and callers who cannot view them, writing nothing', async () => {
    const { conversation_id, run_id } = await newRun(t);
    const followups = `/agent/conversations/${conversation_id}/followups`;
    await expectRefused(t, () => t.call('POST', followups, {}), 400);
    await expectRefused(t, () => t.call('POST', followups, { message: '   ' }), 400);
    await expectRefused(t, () => t.call('POST', followups, { message: 'x', mode: 'fast' }), 400);
    await expectRefused(
      t,
      () => t.call('POST', followups, { message: 'x', attachments: ['1', '2', '3', '4', '5', '6'] }),
      400,
    );
    await expectRefused(t, () => t.call('POST', followups, { message: 'x', extra: true }), 400);
    await expectRefused(t, () => t.call('POST', followups, { message: 'x'.repeat(1_000_001) }), 400);
    await expectRefused(t, () => t.call('POST', followups, { message: 'x' }, outsider), 404, 'resource_not_found');
    await expectRefused(t, () => t.call('POST', '/agent/conversations/nope/followups', { message: 'x' }), 404);
    await expectRefused(t, () => t.call('POST', followups, { message: 'x' }, null), 401);

    const attachments = `/agent/conversations/${conversation_id}/attachments`;
    await expectRefused(t, () => t.call('POST', attachments, { ...attachment, mime_type: 'application/pdf' }), 400);
    await expectRefused(t, () => t.call('POST', attachments, { ...attachment, data: 'not base64!' }), 400);
    await expectRefused(t, () => t.call('POST', attachments, { ...attachment, file_name: '' }), 400);
    await expectRefused(t, () => t.call('POST', attachments, attachment, outsider), 404);
    await expectRefused(t, () => t.call('POST', '/agent/conversations/nope/attachments', attachment), 404);
    await expectRefused(t, () => t.call('POST', `/agent/runs/${run_id}/attachments`, attachment, outsider), 404);
    await expectRefused(t, () => t.call('POST', '/agent/runs/nope/attachments', attachment), 404);
  });

  it('refuses an attachment over 10 MB', async () => {
    const { conversation_id } = await newRun(t);
    const big = { ...attachment, data: Buffer.alloc(10 * 1024 * 1024 + 1).toString('base64') };
    await expectRefused(t, () => t.call('POST', `/agent/conversations/${conversation_id}/attachments`, big), 400);
    const max = { ...attachment, data: Buffer.alloc(10 * 1024 * 1024).toString('base64') };
    expect((await t.call('POST', `/agent/conversations/${conversation_id}/attachments`, max)).statusCode).toBe(201);
  });

  it('interrupts the newest run’s live turn (202), and accepts an interrupt with none, changing nothing', async () => {
    const { run_id, conversation_id } = await newRun(t);
    const interrupt = () => t.call('POST', `/agent/conversations/${conversation_id}/interrupt`);
    const before = await t.head();
    const idle = await interrupt();
    expect(idle.statusCode).toBe(202);
    expect(idle.json()).toEqual({ conversation_id, run_id });
    expect(await t.head()).toBe(before);

    const held = await startRun(t, run_id);
    expect((await interrupt()).statusCode).toBe(202);
    const [last] = await t.rt.events.readStream(`run-${run_id}`, { direction: 'backwards', maxCount: 1 });
    expect(last).toMatchObject({ type: 'RunInterruptRequested', data: { execution_id: held.execution_id } });
    expect((await t.call('GET', `/agent/conversations/${conversation_id}`)).json().steps).toHaveLength(1);

    await expectRefused(
      t,
      () => t.call('POST', `/agent/conversations/${conversation_id}/interrupt`, undefined, outsider),
      404,
    );
    await expectRefused(t, () => t.call('POST', '/agent/conversations/nope/interrupt'), 404);
  });
});
