/**
 * A suite's tasks under /factory/{factory_uid}/benchmarks/{suite_uid}/tasks: add (an identical
 * task is the existing one, 200), PATCH and DELETE.
 */
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { noContent } from '../../src/http/schemas.js';
import { timeOrderedId } from '../../src/ids.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { benchmarkSuitesProjection } from '../../projections/benchmark/benchmark-suites.js';
import type { TaskContent } from './events.js';
import { createTaskBody, patchTaskBody, suiteParams, taskParams } from './request-schemas.js';
import { executeSuite, liveSuite, managedFactory } from './suite-access.js';
import { sourceRun, taskContent } from './suite-checks.js';
import { titleKey } from './suite-decider.js';
import { taskResource, toTaskResource } from './suite-resource.js';

const tags = ['benchmarks'];

type TaskParams = z.infer<typeof taskParams>;

const taskAnswer = async (rt: Runtime, uid: string) => {
  const doc = await rt.readTable(benchmarkSuitesProjection, 'tasks').get(uid);
  if (!doc) throw new NotFound('task', uid);
  return toTaskResource(doc);
};

/** The task added (201), or the identical task the suite has (200). */
async function addTask(
  rt: Runtime,
  req: FastifyRequest,
  params: z.infer<typeof suiteParams>,
  body: z.infer<typeof createTaskBody>,
) {
  const { factory, context } = await managedFactory(rt, req, params.factory_uid);
  const suite = await liveSuite(rt, factory.uid, params.suite_uid, context);
  const content = await taskContent(rt, body, context, 'body');
  const { events, state } = await executeSuite(
    rt,
    factory.uid,
    suite.uid,
    { type: 'AddTask', data: { task: { ...content, uid: timeOrderedId(), id: 0 } } },
    context,
  );
  if (events.length) {
    const added = events[0]!;
    return {
      status: 201 as const,
      task: await taskAnswer(rt, added.type === 'BenchmarkTaskAdded' ? added.data.task.uid : ''),
    };
  }
  // An identical task: the existing one.
  const existing =
    state.status === 'live' ? state.tasks.find((t) => titleKey(t.title) === titleKey(content.title)) : null;
  return { status: 200 as const, task: await taskAnswer(rt, existing?.uid ?? '') };
}

async function patchTask(rt: Runtime, req: FastifyRequest, params: TaskParams, b: z.infer<typeof patchTaskBody>) {
  const { factory, context } = await managedFactory(rt, req, params.factory_uid);
  const suite = await liveSuite(rt, factory.uid, params.suite_uid, context);
  const { task_uid } = params;
  if (!suite.tasks.some((t) => t.uid === task_uid)) throw new NotFound('task', task_uid);
  if (b.source_run_id) await sourceRun(rt, b.source_run_id, context, 'body.source_run_id');
  const changes: Partial<TaskContent> = Object.fromEntries(
    Object.entries({
      title: b.title,
      prompt: b.prompt,
      success_criteria: b.success_criteria,
      source_run_id: b.source_run_id,
      starting_repo_refs: b.starting_repo_refs,
      tags: b.tags,
      labels: b.labels,
    }).filter(([, v]) => v !== undefined),
  );
  await executeSuite(rt, factory.uid, suite.uid, { type: 'EditTask', data: { task_uid, changes } }, context);
  return taskAnswer(rt, task_uid);
}

async function deleteTask(rt: Runtime, req: FastifyRequest, params: TaskParams) {
  const { factory, context } = await managedFactory(rt, req, params.factory_uid);
  const suite = await liveSuite(rt, factory.uid, params.suite_uid, context);
  await executeSuite(rt, factory.uid, suite.uid, { type: 'DeleteTask', data: { task_uid: params.task_uid } }, context);
}

export default function taskRoutes(api: Api, rt: Runtime): void {
  api.post(
    '/factory/:factory_uid/benchmarks/:suite_uid/tasks',
    {
      schema: { params: suiteParams, body: createTaskBody, response: { 200: taskResource, 201: taskResource }, tags },
      config: { idempotent: true },
    },
    async (req, reply) => {
      const { status, task } = await addTask(rt, req, req.params, req.body);
      return reply.code(status).send(task);
    },
  );
  api.patch(
    '/factory/:factory_uid/benchmarks/:suite_uid/tasks/:task_uid',
    { schema: { params: taskParams, body: patchTaskBody, response: { 200: taskResource }, tags } },
    (req) => patchTask(rt, req, req.params, req.body),
  );
  api.delete(
    '/factory/:factory_uid/benchmarks/:suite_uid/tasks/:task_uid',
    { schema: { params: taskParams, response: { 204: noContent() }, tags } },
    async (req, reply) => {
      await deleteTask(rt, req, req.params);
      return reply.code(204).send(null);
    },
  );
}
