/**
 * History for auditors, straight from the event log (history is the events; no read model holds
 * it): GET /factory/{factory_uid}/tasks/{task_uid}/history, the task's stream and its
 * conversation's stream, merged in log order (src/http/history.ts: the entries and their pages).
 * The `shopfloor history` command prints the same entries.
 */
import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import { conversationStream } from '../../commands/conversation/events.js';
import { type TaskCreatedData, taskStream } from '../../commands/task/events.js';
import { comparePositions, type EventStore, type RecordedEvent } from '../../src/eventstore/port.js';
import { cursorNumbers, historyPage, historyQuery, historyResponse } from '../../src/http/history.js';
import { uidParam } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { viewerOf } from '../../commands/run/public.js';
import type { Api } from '../../src/http/api.js';
import { ownsKey } from '../../src/own-keys.js';

/** The task's creation and the events of its stream and its conversation's, in log order. */
export async function taskHistory(
  events: EventStore,
  taskUid: string,
): Promise<{ task: TaskCreatedData; events: RecordedEvent[] } | null> {
  const own = await events.readStream(taskStream(taskUid));
  if (own[0]?.type !== 'TaskCreated') return null;
  const task = own[0].data as TaskCreatedData;
  const conversation = await events.readStream(conversationStream(task.conversation_id));
  return { task, events: [...own, ...conversation].sort((a, b) => comparePositions(a.position, b.position)) };
}

// Cursors: a task's history (two streams) pages by global position.
const TASK_ORDER: Sort = [
  ['commit', 'asc'],
  ['prepare', 'asc'],
];

const viewer = (req: FastifyRequest) => viewerOf(req.principal!);

/** GET /factory/{factory_uid}/tasks/{task_uid}/history */
export function taskHistoryRoutes(api: Api, rt: Runtime): void {
  const params = z.object({ factory_uid: uidParam, task_uid: uidParam });
  api.get(
    '/factory/:factory_uid/tasks/:task_uid/history',
    { schema: { params, querystring: historyQuery, response: { 200: historyResponse }, tags: ['history'] } },
    async (req) => {
      const { factory_uid: uid, task_uid } = req.params;
      const history = await taskHistory(rt.events, task_uid);
      // A deleted task keeps its history: auditors read it after the task is gone.
      if (!history || history.task.factory_uid !== uid || !ownsKey(viewer(req).teams, history.task.team_uid))
        throw new NotFound('task', task_uid);
      const after = cursorNumbers(req.query.cursor, TASK_ORDER);
      const rest = after
        ? history.events.filter((e) => comparePositions(e.position, { commit: after[0]!, prepare: after[1]! }) > 0)
        : history.events;
      return historyPage(rest, req.query.limit, TASK_ORDER, (e) => [
        e.position.commit.toString(),
        e.position.prepare.toString(),
      ]);
    },
  );
}
