/**
 * POST /factory/{factory_uid}/tasks, PATCH and DELETE /factory/{factory_uid}/tasks/{task_uid},
 * POST /factory/{factory_uid}/tasks/{task_uid}/cancel and POST /factory/{factory_uid}/runs (dispatch).
 */
import { timeOrderedId } from '../../src/ids.js';
import { z } from 'zod';
import { commandContext } from '../../src/http/context.js';
import { noContent, uidParam } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { identitiesProjection } from '../identity/public.js';
import { tasksProjection } from '../../projections/task/tasks.js';
import { taskDetail, taskFactoryParams, taskParams, taskResource } from './resource.js';
import { conversationDecider } from '../conversation/public.js';
import { conversationStream } from '../conversation/events.js';
import { cancelTask } from './cancel.js';
import { liveFactory } from '../factory/public.js';
import { createTask } from './create.js';
import { taskDecider } from './task-decider.js';
import { dispatchBody, dispatchedRun, dispatchRun } from './dispatch.js';
import { STAGES, taskStream } from './events.js';
import type { Api } from '../../src/http/api.js';

const title = z.string().trim().min(1).max(500);
const description = z.string().max(10_000).nullable();

const createBody = z
  .object({
    title,
    conversation_id: uidParam,
    stage: z.enum(STAGES).default('TRIAGE'),
    description: description.optional(),
  })
  .strict();

const patchBody = z
  .object({ title: title.optional(), description: description.optional(), stage: z.enum(STAGES).optional() })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one of title, description, stage' });

/** An empty description clears it, as null does. */
const cleared = (d: string | null | undefined) => (d === '' ? null : d);

export default function taskRoutes(api: Api, rt: Runtime): void {
  const tasks = rt.readModel(tasksProjection);
  const identities = rt.readModel(identitiesProjection);
  /** The task as the read model shows it now that the command's events are projected. */
  const current = async (uid: string) => {
    const task = await tasks.get(uid);
    if (!task) throw new NotFound('task', uid);
    return taskDetail(task);
  };

  const tags = ['tasks'];
  api.post(
    '/factory/:factory_uid/tasks',
    {
      schema: { params: taskFactoryParams, body: createBody, response: { 201: taskResource }, tags },
      config: { idempotent: true },
    },
    async (req, reply) => {
      const uid = timeOrderedId();
      const { title, conversation_id, stage, description } = req.body;
      const { factory_uid } = req.params;
      await createTask(
        rt,
        { uid, factory_uid, conversation_id, title, stage, description: cleared(description) ?? null },
        commandContext(req),
      );
      return reply.code(201).send(await current(uid));
    },
  );

  api.patch(
    '/factory/:factory_uid/tasks/:task_uid',
    { schema: { params: taskParams, body: patchBody, response: { 200: taskResource }, tags } },
    async (req) => {
      const { factory_uid, task_uid } = req.params;
      const context = commandContext(req);
      await liveFactory(rt, factory_uid, context);
      const { title, description, stage } = req.body;
      await rt.execute(
        taskStream(task_uid),
        taskDecider,
        {
          type: 'UpdateTask',
          data: { uid: task_uid, factory_uid, title, stage, description: cleared(description) },
        },
        context,
      );
      return current(task_uid);
    },
  );

  api.delete(
    '/factory/:factory_uid/tasks/:task_uid',
    { schema: { params: taskParams, response: { 204: noContent() }, tags } },
    async (req, reply) => {
      const { factory_uid, task_uid } = req.params;
      const context = commandContext(req);
      await liveFactory(rt, factory_uid, context);
      const { events } = await rt.execute(
        taskStream(task_uid),
        taskDecider,
        { type: 'DeleteTask', data: { uid: task_uid, factory_uid } },
        context,
      );
      const deleted = events.find((e) => e.type === 'TaskDeleted');
      if (deleted) {
        const { conversation_id } = deleted.data as { conversation_id: string };
        await rt.execute(
          conversationStream(conversation_id),
          conversationDecider,
          { type: 'ReleaseTask', data: { conversation_id, task_uid } },
          context,
        );
      }
      return reply.code(204).send(null);
    },
  );

  api.post(
    '/factory/:factory_uid/tasks/:task_uid/cancel',
    { schema: { params: taskParams, response: { 200: taskResource }, tags } },
    async (req) => {
      await cancelTask(rt, req.params.factory_uid, req.params.task_uid, commandContext(req));
      return current(req.params.task_uid);
    },
  );

  api.post(
    '/factory/:factory_uid/runs',
    {
      schema: { params: taskFactoryParams, body: dispatchBody, response: { 201: dispatchedRun }, tags },
      config: { idempotent: true },
    },
    async (req, reply) =>
      reply.code(201).send(await dispatchRun(rt, identities, req.params.factory_uid, req.body, commandContext(req))),
  );
}
