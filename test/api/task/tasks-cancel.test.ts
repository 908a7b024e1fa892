import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v4 as uuidv4 } from 'uuid';
import { createRun } from '../../../commands/run/create.js';
import { runRequestSchema } from '../../../commands/run/schema.js';
import { taskCancelReactor } from '../../../commands/task/task-reactor.js';
import { taskStream } from '../../../commands/task/events.js';
import { runsProjection } from '../../../projections/run/runs.js';
import type { RecordedEvent } from '../../../src/eventstore/port.js';
import { expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';
import {
  adminContext,
  finishRun,
  newRun,
  outsiderKey,
  runCommand,
  startRun,
} from '../../helpers/conversation-fixtures.js';
import { eventually, newFactory, newMember } from '../../helpers/task-fixtures.js';

let t: TestApp;
let factory: string;
beforeAll(async () => {
  t = await startTestApp();
  factory = await newFactory(t);
});
afterAll(() => t.close());

const runState = async (runId: string) => (await t.rt.readModel(runsProjection).get(runId))?.state;
const stateBecomes = (runId: string, state: string) =>
  eventually(async () => ((await runState(runId)) === state ? true : undefined));

async function taskFor(conversation_id: string) {
  const res = await t.call('POST', `/factory/${factory}/tasks`, { title: 'Cancel me', conversation_id });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { uid: string };
}
const cancel = (taskUid: string, key?: string, factoryUid = factory) =>
  t.call('POST', `/factory/${factoryUid}/tasks/${taskUid}/cancel`, undefined, key);
const lease = (runId: string) =>
  runCommand(t, runId, {
    type: 'LeaseRun',
    data: {
      run_id: runId,
      worker_id: 'w-1',
      execution_id: uuidv4(),
      lease_expires_at: new Date(Date.now() + 60_000).toISOString(),
    },
  });

describe('POST /factory/{uid}/tasks/{task_uid}/cancel', () => {
  it('cancels the current run, then every non-terminal descendant of the root, and returns the refreshed task', async () => {
    const root = await newRun(t);
    const queuedChild = await newRun(t, { parent_run_id: root.run_id });
    const runningGrandchild = await newRun(t, { parent_run_id: queuedChild.run_id });
    const doneChild = await newRun(t, { parent_run_id: root.run_id });
    const unrelated = await newRun(t);
    await startRun(t, runningGrandchild.run_id);
    await finishRun(t, doneChild.run_id, await startRun(t, doneChild.run_id));
    const task = await taskFor(root.conversation_id);

    const res = await cancel(task.uid);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      uid: task.uid,
      stage: 'CANCELLED',
      current_run: { run_id: root.run_id, state: 'CANCELLED', is_run_type_cancellable: true },
    });
    expect(await runState(root.run_id)).toBe('CANCELLED');

    await stateBecomes(queuedChild.run_id, 'CANCELLED');
    await stateBecomes(runningGrandchild.run_id, 'CANCELLED');
    expect(await runState(doneChild.run_id)).toBe('SUCCEEDED');
    expect(await runState(unrelated.run_id)).toBe('QUEUED');

    // The reaction is recorded as caused by the task's cancellation, by the system.
    const [taskCancelled] = (await t.rt.events.readStream(taskStream(task.uid))).filter(
      (e) => e.type === 'TaskCancelled',
    );
    const childCancelled = (await t.rt.events.readStream(`run-${queuedChild.run_id}`)).find(
      (e) => e.type === 'RunCancelled',
    )!;
    expect(childCancelled.metadata).toMatchObject({ causation_id: taskCancelled!.id, actor: { type: 'system' } });

    // Reacting to the same event again changes nothing.
    const before = await t.head();
    await taskCancelReactor.on.TaskCancelled!(taskCancelled as RecordedEvent<never>, t.rt);
    expect(await t.head()).toBe(before);
  });

  it('cancels a run in progress, and a PENDING descendant once its lease ends', async () => {
    const root = await newRun(t);
    const pendingChild = await newRun(t, { parent_run_id: root.run_id });
    await startRun(t, root.run_id);
    await lease(pendingChild.run_id);
    const task = await taskFor(root.conversation_id);
    expect((await cancel(task.uid)).json().current_run.state).toBe('CANCELLED');
    expect(await runState(pendingChild.run_id)).toBe('PENDING');
    await runCommand(t, pendingChild.run_id, {
      type: 'ExpireLease',
      data: { run_id: pendingChild.run_id, worker_id: 'w-1' },
    });
    await stateBecomes(pendingChild.run_id, 'CANCELLED');
  });

  it('refuses a terminal current run with 400, writing nothing', async () => {
    const root = await newRun(t);
    await finishRun(t, root.run_id, await startRun(t, root.run_id), 'FAILED');
    const task = await taskFor(root.conversation_id);
    await expectRefused(t, () => cancel(task.uid), 400);
    expect((await t.call('GET', `/factory/${factory}/tasks/${task.uid}`)).json().stage).toBe('TRIAGE');
  });

  it('refuses a second cancel: the current run has ended', async () => {
    const root = await newRun(t);
    const task = await taskFor(root.conversation_id);
    expect((await cancel(task.uid)).statusCode).toBe(200);
    await expectRefused(t, () => cancel(task.uid), 400);
  });

  it('refuses a PENDING current run with 409 (retry later), writing nothing', async () => {
    const root = await newRun(t);
    await lease(root.run_id);
    const task = await taskFor(root.conversation_id);
    await expectRefused(t, () => cancel(task.uid), 409, 'conflict');
  });

  it('refuses a run type the server cannot cancel with 422', async () => {
    const action = await createRun(t.rt, runRequestSchema.parse({ prompt: 'from CI' }), adminContext(t), {
      source: 'GITHUB_ACTION',
      team_uid: t.teamUid,
    });
    const task = await taskFor(action.conversation_id);
    expect(
      (await t.call('GET', `/factory/${factory}/tasks/${task.uid}`)).json().current_run.is_run_type_cancellable,
    ).toBe(false);
    await expectRefused(t, () => cancel(task.uid), 422, 'operation_not_supported');
  });

  it('answers 403 when the caller sees the task but not its current run', async () => {
    const mate = await newMember(t);
    const root = await newRun(t);
    const task = await taskFor(root.conversation_id);
    // The teammate continues the conversation with a personal run: now the current run.
    const personal = await createRun(
      t.rt,
      runRequestSchema.parse({ prompt: 'mine', team: false, conversation_id: root.conversation_id }),
      mate.context,
      { source: 'API', team_uid: t.teamUid },
    );
    expect((await t.call('GET', `/factory/${factory}/tasks/${task.uid}`)).json().current_run.run_id).toBe(
      personal.run_id,
    );
    await expectRefused(t, () => cancel(task.uid), 403, 'not_authorized');
    expect((await cancel(task.uid, mate.key)).statusCode).toBe(200);
  });

  it('answers 404 when the task has no resolvable current run', async () => {
    const root = await newRun(t);
    // A sub-run starts a conversation of its own: that conversation has no root run.
    const child = await newRun(t, { parent_run_id: root.run_id });
    const task = await taskFor(child.conversation_id);
    await expectRefused(t, () => cancel(task.uid), 404);
  });

  it('answers 404 for an unknown task, another factory or another team', async () => {
    const root = await newRun(t);
    const task = await taskFor(root.conversation_id);
    await expectRefused(t, () => cancel(uuidv4()), 404);
    const elsewhere = await newFactory(t);
    await expectRefused(t, () => cancel(task.uid, undefined, elsewhere), 404);
    await expectRefused(t, () => cancel(task.uid, undefined, 'nope'), 404);
    const outsider = await outsiderKey(t);
    await expectRefused(t, () => cancel(task.uid, outsider), 404);
    expect((await t.call('DELETE', `/factory/${factory}/tasks/${task.uid}`)).statusCode).toBe(204);
    await expectRefused(t, () => cancel(task.uid), 404);
  });
});
