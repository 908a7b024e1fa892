/**
 * Creating a task spans three streams: the factory (it must be visible), the conversation
 * (bound with the revision read, so "one live task per conversation" holds across factories)
 * and the task. The binding is decided first, so a refused create writes nothing.
 */
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { conversationDecider } from '../conversation/public.js';
import { conversationStream } from '../conversation/events.js';
import { liveFactory } from '../factory/public.js';
import { runState } from '../run/public.js';
import { type LiveTask, taskDecider, type TaskState } from './task-decider.js';
import { type Stage, taskStream } from './events.js';

export interface NewTask {
  uid: string;
  factory_uid: string;
  conversation_id: string;
  title: string;
  description: string | null;
  stage: Stage;
}

export const taskState = async (rt: Runtime, uid: string): Promise<TaskState> => rt.state(taskDecider, taskStream(uid));

/** The task bound to the conversation when its own stream says it was deleted, else null. */
async function deletedBinding(rt: Runtime, conversationId: string): Promise<string | null> {
  const conversation = await rt.state(conversationDecider, conversationStream(conversationId));
  if (!conversation.task) return null;
  return (await taskState(rt, conversation.task.task_uid)).status === 'deleted' ? conversation.task.task_uid : null;
}

export async function createTask(rt: Runtime, task: NewTask, context: CommandContext): Promise<LiveTask> {
  const factory = await liveFactory(rt, task.factory_uid, context);
  const { conversation_id, uid } = task;
  const bound = await rt.handle(
    conversationStream(conversation_id),
    conversationDecider,
    {
      type: 'BindTask',
      data: {
        conversation_id,
        task_uid: uid,
        factory_uid: factory.uid,
        factory_team_uid: factory.team_uid,
        deleted_task_uid: await deletedBinding(rt, conversation_id),
      },
    },
    context,
  );
  // The seed run: the conversation's most recent run when the task was bound to it.
  const seedRunId = bound.state.runs.at(-1)!.run_id;
  try {
    const seed = (await runState(rt, seedRunId))?.created ?? null;
    const { state } = await rt.execute(
      taskStream(uid),
      taskDecider,
      {
        type: 'CreateTask',
        data: {
          ...task,
          team_uid: factory.team_uid,
          run_id: seedRunId,
          author: seed?.creator ?? null,
          ticket_id: seed?.metadata.ticket_id ?? null,
          ticket_source: seed?.metadata.ticket_source ?? null,
        },
      },
      context,
    );
    return state as LiveTask;
  } catch (error) {
    // Undo a binding made here, so that a failed create leaves the conversation free.
    if (bound.events.length)
      await rt.execute(
        conversationStream(conversation_id),
        conversationDecider,
        { type: 'ReleaseTask', data: { conversation_id, task_uid: uid } },
        context,
      );
    throw error;
  }
}
