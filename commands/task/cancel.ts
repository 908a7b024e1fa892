/**
 * POST /factory/{uid}/tasks/{task_uid}/cancel: the task's current top-level run (the newest root
 * run of its conversation) is cancelled here, by the run decider, so that its refusals (400
 * terminal, 409 PENDING, 422 type) come back at once and nothing is written; then the task
 * moves to CANCELLED. The rest of the run tree is cancelled by a reactor (see task-reactor.ts).
 */
import { Forbidden, NotFound } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { conversationDecider } from '../conversation/public.js';
import { conversationStream } from '../conversation/events.js';
import { runDecider, runState, canView } from '../run/public.js';
import { runStream } from '../run/events.js';
import { liveFactory } from '../factory/public.js';
import { taskState } from './create.js';
import { live, taskDecider } from './task-decider.js';
import { taskStream } from './events.js';

/** The conversation's newest root run, read from the conversation and run streams. */
async function currentRootRun(rt: Runtime, conversationId: string): Promise<string | null> {
  const conversation = await rt.state(conversationDecider, conversationStream(conversationId));
  for (const { run_id } of [...conversation.runs].reverse()) {
    if ((await runState(rt, run_id))?.created.parent_run_id === null) return run_id;
  }
  return null;
}

export async function cancelTask(
  rt: Runtime,
  factoryUid: string,
  taskUid: string,
  context: CommandContext,
): Promise<void> {
  await liveFactory(rt, factoryUid, context);
  const task = live(await taskState(rt, taskUid), taskUid, factoryUid, context);
  const runId = await currentRootRun(rt, task.conversation_id);
  if (!runId) throw new NotFound('current run of task', taskUid);
  const run = await rt.state(runDecider, runStream(runId));
  if (run.status !== 'live') throw new NotFound('current run of task', taskUid);
  if (!canView(run, context))
    throw new Forbidden(`the caller cannot access run ${runId}, the current run of task ${taskUid}`);
  await rt.execute(
    runStream(runId),
    runDecider,
    { type: 'CancelRun', data: { run_id: runId, reason: `task ${taskUid} cancelled` } },
    context,
  );
  await rt.execute(
    taskStream(taskUid),
    taskDecider,
    { type: 'CancelTask', data: { uid: taskUid, factory_uid: factoryUid, run_id: runId } },
    context,
  );
}
