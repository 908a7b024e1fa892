/**
 * History for auditors, straight from the event log (history is the events; no read model holds
 * it): GET /factory/{factory_uid}/tasks/{task_uid}/history (the task's stream and its
 * conversation's stream, merged in log order) and GET /agent/runs/{run_id}/history (the run's stream).
 *
 * Entries are oldest first. `position` is the event's global commit position as a decimal
 * string (it outgrows JSON numbers on EventStoreDB); `revision` is its number in its stream.
 * The `shopfloor history` command prints the same entries.
 */
import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import { type RunCreatedData, runStream } from '../../commands/run/events.js';
import { conversationStream } from '../../commands/conversation/events.js';
import { type TaskCreatedData, taskStream } from '../../commands/task/events.js';
import { comparePositions, type EventStore, type RecordedEvent } from '../../src/eventstore/port.js';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { limitParam, pageInfoSchema, uidParam } from '../../src/http/schemas.js';
import { InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { viewerOf } from './artifacts.js';
import { canView, runParams } from '../../commands/run/resource.js';
import type { Api } from '../../src/http/api.js';
import { ownsKey } from '../../src/own-keys.js';

export const historyEntry = z.object({
  id: z.string().describe("The event's id"),
  position: z.string().describe("The event's global commit position, a decimal string (it outgrows JSON numbers)"),
  stream: z.string(),
  revision: z.number().int().describe("The event's number in its stream, from 0"),
  type: z.string().describe('The event type, such as RunCreated or TaskUpdated'),
  occurred_at: z.string(),
  actor: z.object({ type: z.enum(['user', 'agent', 'system']), uid: z.string() }),
  correlation_id: z.string(),
  causation_id: z.string().nullable(),
  request_id: z.string().nullable(),
  data: z.record(z.string(), z.unknown()).describe('The event as recorded'),
});

export type HistoryEntry = z.infer<typeof historyEntry>;

const historyResponse = z.object({ entries: z.array(historyEntry), page_info: pageInfoSchema });

export const toHistoryEntry = (e: RecordedEvent): HistoryEntry => ({
  id: e.id,
  position: e.position.commit.toString(),
  stream: e.stream,
  revision: Number(e.revision),
  type: e.type,
  occurred_at: e.metadata.occurred_at,
  actor: e.metadata.actor,
  correlation_id: e.metadata.correlation_id,
  causation_id: e.metadata.causation_id,
  request_id: e.metadata.request_id,
  data: e.data as Record<string, unknown>, // every event's data is a JSON object (NewEvent)
});

/** The run's creation (who may see it) and its events, or null for an unknown run. */
export async function runHistory(
  events: EventStore,
  runId: string,
): Promise<{ run: RunCreatedData; events: RecordedEvent[] } | null> {
  const all = await events.readStream(runStream(runId));
  return all[0]?.type === 'RunCreated' ? { run: all[0].data as RunCreatedData, events: all } : null;
}

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

const query = z.object({ limit: limitParam(1000, 500), cursor: z.string().max(1000).optional() }).strict();

// Cursors: a run's history pages by revision, a task's (two streams) by global position.
const RUN_ORDER: Sort = [['revision', 'asc']];
const TASK_ORDER: Sort = [
  ['commit', 'asc'],
  ['prepare', 'asc'],
];

/** The cursor's keyset as non-negative integers; anything else was not issued here. */
function cursorNumbers(cursor: string | undefined, sort: Sort): bigint[] | undefined {
  const values = decodeCursor(cursor, sort);
  if (values && !values.every((v) => /^\d{1,20}$/.test(String(v)))) {
    throw new InvalidRequest(
      'cursor is not valid: malformed cursor',
      [{ path: 'querystring.cursor', message: 'malformed cursor' }],
      'invalid_cursor',
    );
  }
  return values?.map((v) => BigInt(String(v)));
}

function page(
  events: RecordedEvent[],
  limit: number,
  sort: Sort,
  key: (e: RecordedEvent) => Array<string | number>,
): z.infer<typeof historyResponse> {
  const shown = events.slice(0, limit);
  const last = shown.at(-1);
  return {
    entries: shown.map(toHistoryEntry),
    page_info: pageInfo(sort, events.length > limit && last ? key(last) : null),
  };
}

const tags = ['history'];
const viewer = (req: FastifyRequest) => viewerOf(req.principal!);

/** GET /factory/{factory_uid}/tasks/{task_uid}/history */
export function taskHistoryRoutes(api: Api, rt: Runtime): void {
  const params = z.object({ factory_uid: uidParam, task_uid: uidParam });
  api.get(
    '/factory/:factory_uid/tasks/:task_uid/history',
    { schema: { params, querystring: query, response: { 200: historyResponse }, tags } },
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
      return page(rest, req.query.limit, TASK_ORDER, (e) => [
        e.position.commit.toString(),
        e.position.prepare.toString(),
      ]);
    },
  );
}

/** GET /agent/runs/{run_id}/history */
export function runHistoryRoutes(api: Api, rt: Runtime): void {
  api.get(
    '/agent/runs/:run_id/history',
    { schema: { params: runParams, querystring: query, response: { 200: historyResponse }, tags } },
    async (req) => {
      const { run_id: runId } = req.params;
      const [first] = await rt.events.readStream(runStream(runId), { maxCount: 1 });
      const run = first?.type === 'RunCreated' ? (first.data as RunCreatedData) : null;
      if (!run || !canView({ ...run, creator_uid: run.creator.uid }, viewer(req))) throw new NotFound('run', runId);
      const after = cursorNumbers(req.query.cursor, RUN_ORDER);
      const fromRevision = after ? after[0]! + 1n : 0n;
      const events = await rt.events.readStream(runStream(runId), { fromRevision, maxCount: req.query.limit + 1 });
      return page(events, req.query.limit, RUN_ORDER, (e) => [Number(e.revision)]);
    },
  );
}
