import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v4 as uuidv4 } from 'uuid';
import { createRun } from '../../../commands/run/create.js';
import { runRequestSchema } from '../../../commands/run/schema.js';
import { taskDecider } from '../../../commands/task/task-decider.js';
import { taskStream } from '../../../commands/task/events.js';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';
import { adminContext, addArtifact, newRun, outsiderKey, startRun } from '../../helpers/conversation-fixtures.js';
import { eventually, newFactory } from '../../helpers/task-fixtures.js';

let t: TestApp;
let factory: string;
let otherFactory: string;
let outsider: string;
beforeAll(async () => {
  t = await startTestApp();
  factory = await newFactory(t, 'Payments');
  otherFactory = await newFactory(t, 'Billing');
  outsider = await outsiderKey(t);
});
afterAll(() => t.close());

const create = (body: unknown, factoryUid = factory, key?: string) =>
  t.call('POST', `/factory/${factoryUid}/tasks`, body, key);

async function newTask(body: Record<string, unknown> = {}, factoryUid = factory) {
  const { conversation_id, run_id } = await newRun(t);
  const res = await create({ title: 'Fix the build', conversation_id, ...body }, factoryUid);
  expect(res.statusCode, res.body).toBe(201);
  return { task: res.json(), conversation_id, run_id };
}

/** Waits until the clock has passed `iso` by at least a millisecond, so later events are later. */
const clockPast = (iso: string) => eventually(async () => (Date.now() > Date.parse(iso) + 1 ? true : undefined));
const tick = () => clockPast(new Date().toISOString());

describe('POST /factory/{uid}/tasks', () => {
  it('creates a task bound to the conversation, in TRIAGE, with its seed run, author and current run', async () => {
    const { conversation_id, run_id } = await newRun(t, { prompt: 'Make CI green' });
    const res = await create({ title: ' Fix the build ', conversation_id, description: 'CI is red' });
    expect(res.statusCode, res.body).toBe(201);
    const task = res.json();
    expect(task).toEqual({
      uid: expect.any(String),
      factory_uid: factory,
      conversation_id,
      run_id,
      stage: 'TRIAGE',
      title: 'Fix the build',
      description: 'CI is red',
      created_at: expect.any(String),
      updated_at: task.created_at,
      author: {
        type: 'user',
        uid: t.adminUid,
        display_name: expect.any(String),
        email: 'admin@example.com',
        photo_url: null,
      },
      current_run: { run_id, state: 'QUEUED', is_run_type_cancellable: true },
      outputs: [],
    });
    expect((await t.call('GET', `/factory/${factory}/tasks/${task.uid}`)).json()).toEqual(task);
  });

  it('takes the requested stage', async () => {
    expect((await newTask({ stage: 'IMPLEMENT' })).task.stage).toBe('IMPLEMENT');
  });

  it('refuses invalid bodies and writes nothing', async () => {
    const { conversation_id } = await newRun(t);
    for (const body of [
      { conversation_id },
      { title: '', conversation_id },
      { title: '   ', conversation_id },
      { title: 'x' },
      { title: 'x', conversation_id: '' },
      { title: 'x', conversation_id, stage: 'DONE' },
      { title: 'x', conversation_id, extra: true },
      { title: 'x'.repeat(501), conversation_id },
    ]) {
      await expectRefused(t, () => create(body), 400, 'invalid_request');
    }
  });

  it('refuses an unknown conversation, or one whose most recent run is not the factory team’s, with 400', async () => {
    await expectRefused(t, () => create({ title: 'x', conversation_id: uuidv4() }), 400, 'invalid_request');
    const personal = await newRun(t, { team: false });
    await expectRefused(t, () => create({ title: 'x', conversation_id: personal.conversation_id }), 400);

    const other = (await t.call('POST', '/teams', { name: 'Elsewhere' })).json();
    const ctx = { ...adminContext(t), teams: { [t.teamUid]: 'admin' as const, [other.uid]: 'admin' as const } };
    const theirs = await createRun(t.rt, runRequestSchema.parse({ prompt: 'x' }), ctx, {
      source: 'API',
      team_uid: other.uid,
    });
    await expectRefused(t, () => create({ title: 'x', conversation_id: theirs.conversation_id }), 400);
    // The most recent run decides: a conversation that moved to our team can be bound.
    await createRun(t.rt, runRequestSchema.parse({ prompt: 'y', conversation_id: theirs.conversation_id }), ctx, {
      source: 'API',
      team_uid: t.teamUid,
    });
    expect((await create({ title: 'x', conversation_id: theirs.conversation_id })).statusCode).toBe(201);
  });

  it('answers 404 for an unknown factory or one of another team', async () => {
    const { conversation_id } = await newRun(t);
    await expectRefused(t, () => create({ title: 'x', conversation_id }, 'no-such-factory'), 404);
    await expectRefused(t, () => create({ title: 'x', conversation_id }, factory, outsider), 404);
  });

  it('binds a conversation to one live task across all factories (409)', async () => {
    const { conversation_id } = await newTask();
    await expectRefused(t, () => create({ title: 'again', conversation_id }), 409, 'conversation_bound');
    await expectRefused(
      t,
      () => create({ title: 'elsewhere', conversation_id }, otherFactory),
      409,
      'conversation_bound',
    );
  });

  it('lets exactly one of two concurrent creates on two factories win', async () => {
    for (let round = 0; round < 5; round++) {
      const { conversation_id } = await newRun(t);
      const results = await Promise.all([
        create({ title: 'A', conversation_id }),
        create({ title: 'B', conversation_id }, otherFactory),
      ]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409]);
      const loser = results.find((r) => r.statusCode === 409)!;
      expectProblem(loser, 409, 'conversation_bound');
      const found = await Promise.all(
        [factory, otherFactory].map((f) =>
          t.call('GET', `/factory/${f}/task-by-conversation?conversation_id=${conversation_id}`),
        ),
      );
      expect(found.map((r) => r.statusCode).sort()).toEqual([200, 404]);
      const bindings = (await t.rt.events.readStream(`conversation-${conversation_id}`)).filter(
        (e) => e.type === 'ConversationTaskBound',
      );
      expect(bindings).toHaveLength(1);
    }
  });
});

describe('PATCH /factory/{uid}/tasks/{task_uid}', () => {
  const patch = (uid: string, body: unknown, factoryUid = factory, key?: string) =>
    t.call('PATCH', `/factory/${factoryUid}/tasks/${uid}`, body, key);

  it('changes title, description and stage; any stage to any stage; the last write wins', async () => {
    const { task } = await newTask();
    await clockPast(task.created_at);
    const res = await patch(task.uid, { title: 'Renamed', description: 'Details', stage: 'COMPLETE' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      uid: task.uid,
      title: 'Renamed',
      description: 'Details',
      stage: 'COMPLETE',
      created_at: task.created_at,
    });
    expect(res.json().updated_at > task.updated_at).toBe(true);
    for (const stage of ['TRIAGE', 'CANCELLED', 'SPEC', 'REVIEW', 'IMPLEMENT']) {
      expect((await patch(task.uid, { stage })).json().stage).toBe(stage);
    }
    expect((await patch(task.uid, { description: '' })).json().description).toBeNull();
    expect((await patch(task.uid, { description: 'back' })).json().description).toBe('back');
    expect((await patch(task.uid, { description: null })).json().description).toBeNull();
    const [a, b] = await Promise.all([patch(task.uid, { title: 'One' }), patch(task.uid, { title: 'Two' })]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(['One', 'Two']).toContain((await t.call('GET', `/factory/${factory}/tasks/${task.uid}`)).json().title);
  });

  it('answers an update that changes nothing with the task, writing nothing', async () => {
    const { task } = await newTask();
    const before = await t.head();
    const res = await patch(task.uid, { title: task.title, stage: task.stage });
    expect(res.statusCode).toBe(200);
    expect(await t.head()).toBe(before);
  });

  it('refuses invalid bodies with 400 and writes nothing', async () => {
    const { task } = await newTask();
    for (const body of [
      {},
      { stage: 'DONE' },
      { title: '' },
      { title: null },
      { stage: null },
      { extra: 1 },
      { description: 'x'.repeat(10_001) },
    ]) {
      await expectRefused(t, () => patch(task.uid, body), 400, 'invalid_request');
    }
  });

  it('answers 404 for another factory, another team, an unknown or a deleted task', async () => {
    const { task } = await newTask();
    await expectRefused(t, () => patch(task.uid, { title: 'x' }, otherFactory), 404);
    await expectRefused(t, () => patch(task.uid, { title: 'x' }, factory, outsider), 404);
    await expectRefused(t, () => patch(uuidv4(), { title: 'x' }), 404);
    expect((await t.call('DELETE', `/factory/${factory}/tasks/${task.uid}`)).statusCode).toBe(204);
    await expectRefused(t, () => patch(task.uid, { title: 'x' }), 404);
  });
});

describe('DELETE /factory/{uid}/tasks/{task_uid}', () => {
  it('removes the task from get and list at once and frees the conversation', async () => {
    const { task, conversation_id } = await newTask({ title: 'Soon gone' });
    const del = await t.call('DELETE', `/factory/${factory}/tasks/${task.uid}`);
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expectProblem(await t.call('GET', `/factory/${factory}/tasks/${task.uid}`), 404);
    expect((await t.call('GET', `/factory/${factory}/tasks?q=soon gone`)).json().tasks).toEqual([]);
    expectProblem(
      await t.call('GET', `/factory/${factory}/task-by-conversation?conversation_id=${conversation_id}`),
      404,
    );
    // The conversation can be bound again, in any factory.
    const again = await create({ title: 'Again', conversation_id }, otherFactory);
    expect(again.statusCode, again.body).toBe(201);
    expect(
      (await t.call('GET', `/factory/${otherFactory}/task-by-conversation?conversation_id=${conversation_id}`)).json()
        .uid,
    ).toBe(again.json().uid);
  });

  it('answers 404 for a repeated delete, another factory or another team, writing nothing', async () => {
    const { task } = await newTask();
    await expectRefused(t, () => t.call('DELETE', `/factory/${otherFactory}/tasks/${task.uid}`), 404);
    await expectRefused(t, () => t.call('DELETE', `/factory/${factory}/tasks/${task.uid}`, undefined, outsider), 404);
    expect((await t.call('DELETE', `/factory/${factory}/tasks/${task.uid}`)).statusCode).toBe(204);
    await expectRefused(t, () => t.call('DELETE', `/factory/${factory}/tasks/${task.uid}`), 404);
  });

  it('frees a conversation whose delete stopped before releasing it', async () => {
    const { task, conversation_id } = await newTask();
    // Only the task's own event, as if the process died before the release.
    await t.rt.execute(
      taskStream(task.uid),
      taskDecider,
      { type: 'DeleteTask', data: { uid: task.uid, factory_uid: factory } },
      adminContext(t),
    );
    const res = await create({ title: 'Taken over', conversation_id });
    expect(res.statusCode, res.body).toBe(201);
  });
});

describe('GET /factory/{uid}/tasks/{task_uid}', () => {
  it('answers 404 for another factory, another team or an unknown task', async () => {
    const { task } = await newTask();
    expectProblem(await t.call('GET', `/factory/${otherFactory}/tasks/${task.uid}`), 404);
    expectProblem(await t.call('GET', `/factory/${factory}/tasks/${task.uid}`, undefined, outsider), 404);
    expectProblem(await t.call('GET', `/factory/${factory}/tasks/${uuidv4()}`), 404);
  });

  it('derives outputs newest first from the whole run tree, leaving updated_at alone', async () => {
    const { task, run_id } = await newTask();
    const child = await newRun(t, { parent_run_id: run_id });
    const grandchild = await newRun(t, { parent_run_id: child.run_id });
    const unrelated = await newRun(t);
    const held = Object.fromEntries(
      await Promise.all(
        [run_id, child.run_id, grandchild.run_id, unrelated.run_id].map(async (id) => [id, await startRun(t, id)]),
      ),
    );
    const artifact = async (runId: string, artifact_type: string, fields: Record<string, unknown>) => {
      await tick();
      await addArtifact(t, runId, held[runId]!, {
        artifact_uid: uuidv4(),
        artifact_type: artifact_type as never,
        public: false,
        ...fields,
      });
    };
    await artifact(run_id, 'PULL_REQUEST', { url: 'https://github.com/acme/pay/pull/1', branch: 'fix' });
    await artifact(run_id, 'PLAN', { document_uid: 'd-1', content: '# plan' });
    await artifact(child.run_id, 'SCREENSHOT', { mime_type: 'image/png', blob: 'b-1' });
    await artifact(grandchild.run_id, 'FILE', {
      filepath: 'out/report.txt',
      filename: 'report.txt',
      mime_type: 'text/plain',
      blob: 'b-2',
    });
    await artifact(grandchild.run_id, 'EXTERNAL_REFERENCE', {
      reference_type: 'linear_issue',
      url: 'https://linear.app/acme/issue/PAY-1',
    });
    await artifact(unrelated.run_id, 'PULL_REQUEST', { url: 'https://github.com/acme/pay/pull/9', branch: 'other' });

    const got = (await t.call('GET', `/factory/${factory}/tasks/${task.uid}`)).json();
    expect(got.outputs.map((o: { artifact_type: string }) => o.artifact_type)).toEqual([
      'EXTERNAL_REFERENCE',
      'FILE',
      'SCREENSHOT',
      'PULL_REQUEST',
    ]);
    expect(got.outputs[3]).toEqual({
      artifact_type: 'PULL_REQUEST',
      created_at: expect.any(String),
      data: { artifact_uid: expect.any(String), url: 'https://github.com/acme/pay/pull/1', branch: 'fix' },
    });
    expect(got.outputs[1].data).not.toHaveProperty('blob');
    expect(got.current_run).toEqual({ run_id, state: 'INPROGRESS', is_run_type_cancellable: true });
    expect(got.updated_at).toBe(task.updated_at);
    // Every read of one task derives the same outputs.
    expect((await t.call('GET', `/factory/${factory}/task-by-run?run_id=${grandchild.run_id}`)).json().outputs).toEqual(
      got.outputs,
    );
  });

  it('follows the conversation’s newest root run as the current run; run_id stays the seed', async () => {
    const { task, conversation_id, run_id } = await newTask();
    const next = await newRun(t, { conversation_id });
    await newRun(t, { parent_run_id: next.run_id, conversation_id });
    const got = (await t.call('GET', `/factory/${factory}/tasks/${task.uid}`)).json();
    expect(got.run_id).toBe(run_id);
    expect(got.current_run.run_id).toBe(next.run_id);
  });

  it('returns the task as it was at `as_of`, also after its deletion; 404 before it existed', async () => {
    const { task } = await newTask({ title: 'Before' });
    await clockPast(task.created_at);
    const renamed = (
      await t.call('PATCH', `/factory/${factory}/tasks/${task.uid}`, { title: 'After', stage: 'SPEC' })
    ).json();
    await clockPast(renamed.updated_at);
    expect((await t.call('DELETE', `/factory/${factory}/tasks/${task.uid}`)).statusCode).toBe(204);

    const asOf = (iso: string) =>
      t.call('GET', `/factory/${factory}/tasks/${task.uid}?as_of=${encodeURIComponent(iso)}`);
    const then = await asOf(task.created_at);
    expect(then.statusCode, then.body).toBe(200);
    expect(then.json()).toMatchObject({
      uid: task.uid,
      title: 'Before',
      stage: 'TRIAGE',
      updated_at: task.created_at,
      author: { uid: t.adminUid },
    });
    expect((await asOf(renamed.updated_at)).json()).toMatchObject({ title: 'After', stage: 'SPEC' });
    // The same instant with an offset.
    const shifted = new Date(Date.parse(renamed.updated_at)).toISOString().replace('Z', '+00:00');
    expect((await asOf(shifted)).json().title).toBe('After');
    expectProblem(await asOf(new Date(Date.parse(task.created_at) - 1000).toISOString()), 404);
    expectProblem(await asOf(new Date().toISOString()), 404);
    expectProblem(
      await t.call('GET', `/factory/${otherFactory}/tasks/${task.uid}?as_of=${encodeURIComponent(task.created_at)}`),
      404,
    );
    expectProblem(await t.call('GET', `/factory/${factory}/tasks/${task.uid}?as_of=yesterday`), 400, 'invalid_request');
  });
});

describe('task-by-conversation and task-by-run', () => {
  it('finds the task of a conversation, and of any run in its tree', async () => {
    const { task, conversation_id, run_id } = await newTask();
    const child = await newRun(t, { parent_run_id: run_id });
    const grandchild = await newRun(t, { parent_run_id: child.run_id });
    const byConversation = await t.call(
      'GET',
      `/factory/${factory}/task-by-conversation?conversation_id=${conversation_id}`,
    );
    expect(byConversation.statusCode).toBe(200);
    expect(byConversation.json()).toMatchObject({ uid: task.uid, outputs: [], current_run: { run_id } });
    for (const id of [run_id, child.run_id, grandchild.run_id]) {
      const res = await t.call('GET', `/factory/${factory}/task-by-run?run_id=${id}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().uid).toBe(task.uid);
    }
  });

  it('is factory-scoped: a task of another factory is 404', async () => {
    const { conversation_id, run_id } = await newTask({}, otherFactory);
    expectProblem(
      await t.call('GET', `/factory/${factory}/task-by-conversation?conversation_id=${conversation_id}`),
      404,
    );
    expectProblem(await t.call('GET', `/factory/${factory}/task-by-run?run_id=${run_id}`), 404);
    expectProblem(
      await t.call('GET', `/factory/${otherFactory}/task-by-run?run_id=${run_id}`, undefined, outsider),
      404,
    );
  });

  it('answers 404 when nothing is bound and 400 without the parameter', async () => {
    const loose = await newRun(t);
    expectProblem(
      await t.call('GET', `/factory/${factory}/task-by-conversation?conversation_id=${loose.conversation_id}`),
      404,
    );
    expectProblem(await t.call('GET', `/factory/${factory}/task-by-run?run_id=${loose.run_id}`), 404);
    expectProblem(await t.call('GET', `/factory/${factory}/task-by-run?run_id=${uuidv4()}`), 404);
    expectProblem(await t.call('GET', `/factory/${factory}/task-by-conversation`), 400, 'invalid_request');
    expectProblem(await t.call('GET', `/factory/${factory}/task-by-run`), 400, 'invalid_request');
    expectProblem(await t.call('GET', `/factory/${factory}/task-by-run?run_id=`), 400);
  });
});
