/**
 * GET /factory/{factory_uid}/tasks, GET /factory/{factory_uid}/tasks/{task_uid} (with `as_of`),
 * GET /factory/{factory_uid}/task-by-conversation and GET /factory/{factory_uid}/task-by-run.
 */
import { z } from 'zod';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { findMerged } from '../../src/readstore/paging.js';
import {
  booleanParam,
  dateTimeParam,
  limitParam,
  pageInfoSchema,
  sortOrderParam,
  uidParam,
  normalizeEmail,
} from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import { eventsAsOf, projectAsOf } from '../../src/projector/as-of.js';
import type { Filter, Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { STAGES, taskStream } from '../../commands/task/events.js';
import { factoriesProjection, visibleFactory } from '../../commands/factory/public.js';
import { runsProjection } from '../../commands/run/public.js';
import { tasksProjection, type TaskDoc } from '../../projections/task/tasks.js';
import { usersProjection } from '../../commands/user/public.js';
import { taskDetail, taskFactoryParams, taskListItem, taskParams, taskResource } from '../../commands/task/public.js';
import type { Api } from '../../src/http/api.js';

/** How many values a repeatable filter takes. */
const MAX_FILTER_VALUES = 50;

const repeatableMax = <T extends z.ZodType>(item: T) =>
  z.preprocess(
    (v) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]),
    z.array(item).max(MAX_FILTER_VALUES).optional(),
  );

/** Stored times are UTC ISO strings: a bound with an offset is compared in the same form. */
const instant = dateTimeParam.transform((s) => new Date(s).toISOString());

const listQuery = z
  .object({
    stage: repeatableMax(z.enum(STAGES)),
    created_by: repeatableMax(z.email().max(320)),
    q: z.string().min(1).max(200).optional(),
    created_after: instant.optional(),
    created_before: instant.optional(),
    updated_after: instant.optional(),
    sort_by: z.enum(['created_at', 'updated_at']).default('created_at'),
    sort_order: sortOrderParam,
    limit: limitParam(),
    cursor: z.string().max(1000).optional(),
    full_list: booleanParam,
    include_current_run: booleanParam,
  })
  .strict();

const listResponse = z.object({ tasks: z.array(taskResource), page_info: pageInfoSchema });

type TaskListQuery = z.infer<typeof listQuery>;

export const taskListSort = (q: Pick<TaskListQuery, 'sort_by' | 'sort_order'>): Sort => [
  [q.sort_by, q.sort_order],
  ['id', q.sort_order],
];

/**
 * The filters of a task list request: one per stage asked for (each seeks the index of the
 * factory, stage and sort key; the pages are merged), else one for the whole factory.
 */
export function taskListFilters(
  q: Omit<TaskListQuery, 'created_by' | 'sort_by' | 'sort_order' | 'limit' | 'full_list' | 'include_current_run'>,
  factoryUid: string,
  authorUids: string[] | undefined,
): Filter[] {
  const rest: Filter = {
    factory_uid: factoryUid,
    author_uid: authorUids && { $in: authorUids },
    title: q.q === undefined ? undefined : { $contains: q.q },
    created_at: q.created_after || q.created_before ? { $gt: q.created_after, $lt: q.created_before } : undefined,
    updated_at: q.updated_after && { $gt: q.updated_after },
  };
  const stages = q.stage && [...new Set(q.stage)];
  return stages ? stages.map((stage) => ({ ...rest, stage })) : [rest];
}

const tags = ['tasks'];

/** What the task queries share: the read models, and the task bound to a conversation. */
function taskReading(rt: Runtime) {
  const tasks = rt.readModel(tasksProjection);
  const conversations = rt.readTable(tasksProjection, 'conversations');
  const users = rt.readModel(usersProjection);
  return {
    rt,
    tasks,
    factories: rt.readModel(factoriesProjection),
    runs: rt.readModel(runsProjection),
    principals: rt.readTable(tasksProjection, 'principals'),
    /** The live task bound to the conversation, if it belongs to this factory. */
    taskOfConversation: async (factoryUid: string, conversationId: string): Promise<TaskDoc | null> => {
      const link = await conversations.get(conversationId);
      const task = link?.task_uid ? await tasks.get(link.task_uid) : null;
      return task?.factory_uid === factoryUid ? task : null;
    },
    /** Uids of the users with these emails; unknown emails match no one. */
    userUids: async (emails: readonly string[]): Promise<string[]> => {
      const page = await users.find({
        filter: { email: { $in: emails.map(normalizeEmail) } },
        sort: [['id', 'asc']],
        limit: MAX_FILTER_VALUES,
      });
      return page.items.map((u) => u.uid);
    },
  };
}

type TaskReading = ReturnType<typeof taskReading>;

export default function taskQueries(api: Api, rt: Runtime): void {
  const reading = taskReading(rt);
  listTasksRoute(api, reading);
  taskRoute(api, reading);
  taskByConversationRoute(api, reading);
  taskByRunRoute(api, reading);
}

function listTasksRoute(api: Api, { rt, tasks, factories, userUids }: TaskReading): void {
  api.get(
    '/factory/:factory_uid/tasks',
    { schema: { params: taskFactoryParams, querystring: listQuery, response: { 200: listResponse }, tags } },
    async (req) => {
      const factory = await visibleFactory(factories, req, req.params.factory_uid);
      const q = req.query;
      const sort = taskListSort(q);
      const after = decodeCursor(q.cursor, sort);
      const authors = q.created_by && (await userUids(q.created_by));
      const filters = taskListFilters(q, factory.uid, authors);
      const page = await findMerged(
        tasks,
        filters,
        { sort, limit: q.limit, after, maxScan: rt.config.LIST_MAX_SCAN },
        (t) => t.uid,
      );
      return { tasks: page.items.map((t) => taskListItem(t, q)), page_info: pageInfo(sort, page.next) };
    },
  );
}

function taskRoute(api: Api, { rt, tasks, factories, principals }: TaskReading): void {
  api.get(
    '/factory/:factory_uid/tasks/:task_uid',
    {
      schema: {
        params: taskParams,
        querystring: z.object({ as_of: dateTimeParam.optional() }).strict(),
        response: {
          200: taskResource.describe(
            'The task with its author, current run and outputs; with `as_of`, the task as its own events had left it ' +
              'then, without current run or outputs',
          ),
        },
        tags,
      },
    },
    async (req) => {
      const { factory_uid, task_uid } = req.params;
      await visibleFactory(factories, req, factory_uid);
      if (req.query.as_of === undefined) {
        const task = await tasks.get(task_uid);
        if (task?.factory_uid !== factory_uid) throw new NotFound('task', task_uid);
        return taskDetail(task);
      }
      // The task as its own events had left it then (read models of other streams are not replayed).
      const then = (await projectAsOf(
        tasksProjection,
        await eventsAsOf(rt.events, [taskStream(task_uid)], req.query.as_of),
        task_uid,
      )) as TaskDoc | null;
      if (then?.factory_uid !== factory_uid) throw new NotFound('task', task_uid);
      // Its author as known now (the task's own events name who, not what they are called).
      const author = then.author_uid ? ((await principals.get(then.author_uid))?.author ?? null) : null;
      return taskListItem({ ...then, author }, { full_list: false, include_current_run: false });
    },
  );
}

function taskByConversationRoute(api: Api, { factories, taskOfConversation }: TaskReading): void {
  api.get(
    '/factory/:factory_uid/task-by-conversation',
    {
      schema: {
        params: taskFactoryParams,
        querystring: z.object({ conversation_id: uidParam }).strict(),
        response: { 200: taskResource },
        tags,
      },
    },
    async (req) => {
      await visibleFactory(factories, req, req.params.factory_uid);
      const task = await taskOfConversation(req.params.factory_uid, req.query.conversation_id);
      if (!task) throw new NotFound('task bound to conversation', req.query.conversation_id);
      return taskDetail(task);
    },
  );
}

function taskByRunRoute(api: Api, { factories, runs, taskOfConversation }: TaskReading): void {
  api.get(
    '/factory/:factory_uid/task-by-run',
    {
      schema: {
        params: taskFactoryParams,
        querystring: z.object({ run_id: uidParam }).strict(),
        response: { 200: taskResource },
        tags,
      },
    },
    async (req) => {
      await visibleFactory(factories, req, req.params.factory_uid);
      // The task of a run is the one bound to the conversation of the run's root.
      const run = await runs.get(req.query.run_id);
      const root = run && (run.root_run_id === run.run_id ? run : await runs.get(run.root_run_id));
      const task = root ? await taskOfConversation(req.params.factory_uid, root.conversation_id) : null;
      if (!task) throw new NotFound('task of run', req.query.run_id);
      return taskDetail(task);
    },
  );
}
