/**
 * Suites under /factory/{factory_uid}/benchmarks: create (also in the hosted SDK's form under
 * `.../benchmarks/suites`), PATCH and DELETE. Each answers the suite with its tasks as the read
 * model shows it once the command's events are projected.
 */
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { noContent } from '../../src/http/schemas.js';
import { timeOrderedId } from '../../src/ids.js';
import { NotFound } from '../../src/kernel/errors.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Runtime } from '../../src/runtime.js';
import { benchmarkSuitesProjection, suiteKey } from '../../projections/benchmark/benchmark-suites.js';
import { identitiesProjection } from '../identity/public.js';
import type { LiveFactory } from '../factory/public.js';
import { foremanOf } from '../task/public.js';
import type { SuiteTask } from './events.js';
import { configurationOf, createSuiteBody, factoryParams, patchSuiteBody, suiteParams } from './request-schemas.js';
import { executeSuite, invalid, liveSuite, managedFactory } from './suite-access.js';
import { agentOf, checkConfigurations, taskContent } from './suite-checks.js';
import { suiteWithTasks, toSuiteResource, toTaskResource } from './suite-resource.js';

const tags = ['benchmarks'];

/** The suite with its tasks, as the read model shows it now that the command's events are projected. */
async function suiteAnswer(rt: Runtime, factoryUid: string, suiteUid: string) {
  const key = suiteKey(factoryUid, suiteUid);
  const doc = await rt.readModel(benchmarkSuitesProjection).get(key);
  if (!doc) throw new NotFound('suite', suiteUid);
  const tasks = await findAll(rt.readTable(benchmarkSuitesProjection, 'tasks'), {
    filter: { suite_key: key },
    sort: [['number', 'asc']],
    limit: 100,
  });
  return { ...toSuiteResource(doc), tasks: tasks.map(toTaskResource), spawnable_descendant_agent_uids: [] };
}

/** The agent a new suite's trials run as: the one named, else the factory's foreman. */
async function agentUidOf(rt: Runtime, factory: LiveFactory, named: string | undefined) {
  if (named) return named;
  const foreman = await foremanOf(rt, rt.readModel(identitiesProjection), factory);
  if (!foreman)
    throw invalid([{ path: 'body.agent_uid', message: 'the factory has no foreman: name the agent trials run as' }]);
  return foreman.uid;
}

async function createSuite(
  rt: Runtime,
  req: FastifyRequest,
  factoryUid: string,
  body: z.infer<typeof createSuiteBody>,
) {
  const { factory, context } = await managedFactory(rt, req, factoryUid);
  const agent = await agentOf(rt, factory, await agentUidOf(rt, factory, body.agent_uid), body.factory_agent_type);
  const configurations = (body.configurations ?? []).map(configurationOf);
  await checkConfigurations(rt, configurations, 'body.configurations');
  const tasks: SuiteTask[] = [];
  for (const [i, t] of (body.tasks ?? []).entries())
    tasks.push({ ...(await taskContent(rt, t, context, `body.tasks[${i}]`)), uid: timeOrderedId(), id: i + 1 });
  const uid = body.uid ?? timeOrderedId();
  const data = {
    uid,
    factory_uid: factory.uid,
    team_uid: factory.team_uid,
    name: body.name,
    description: body.description ?? null,
    agent_uid: agent.uid,
    factory_agent_type: agent.type,
    configurations,
    tasks,
  };
  await executeSuite(rt, factory.uid, uid, { type: 'CreateSuite', data }, context);
  return suiteAnswer(rt, factory.uid, uid);
}

type SuiteParams = z.infer<typeof suiteParams>;

async function patchSuite(rt: Runtime, req: FastifyRequest, params: SuiteParams, b: z.infer<typeof patchSuiteBody>) {
  const { factory, context } = await managedFactory(rt, req, params.factory_uid);
  const suite = await liveSuite(rt, factory.uid, params.suite_uid, context);
  let agent: { uid: string; type: string } | null = null;
  if (b.agent_uid !== undefined || b.factory_agent_type !== undefined)
    agent = await agentOf(rt, factory, b.agent_uid ?? suite.agent_uid, b.factory_agent_type);
  const configurations = b.configurations === undefined ? undefined : (b.configurations ?? []).map(configurationOf);
  if (configurations) await checkConfigurations(rt, configurations, 'body.configurations');
  const changes = {
    ...(b.name !== undefined ? { name: b.name } : {}),
    ...(b.description !== undefined ? { description: b.description || null } : {}),
    ...(agent ? { agent_uid: agent.uid, factory_agent_type: agent.type } : {}),
    ...(configurations ? { configurations } : {}),
  };
  await executeSuite(rt, factory.uid, suite.uid, { type: 'UpdateSuite', data: { changes } }, context);
  return suiteAnswer(rt, factory.uid, suite.uid);
}

async function deleteSuite(rt: Runtime, req: FastifyRequest, params: SuiteParams) {
  const { factory, context } = await managedFactory(rt, req, params.factory_uid);
  const suite = await liveSuite(rt, factory.uid, params.suite_uid, context);
  await executeSuite(rt, factory.uid, suite.uid, { type: 'DeleteSuite', data: {} }, context);
}

export default function suiteRoutes(api: Api, rt: Runtime): void {
  const createSchema = { params: factoryParams, body: createSuiteBody, response: { 201: suiteWithTasks }, tags };
  for (const path of ['/factory/:factory_uid/benchmarks', '/factory/:factory_uid/benchmarks/suites'])
    api.post(path, { schema: createSchema, config: { idempotent: true } }, async (req, reply) =>
      reply.code(201).send(await createSuite(rt, req, req.params.factory_uid, req.body)),
    );
  api.patch(
    '/factory/:factory_uid/benchmarks/:suite_uid',
    { schema: { params: suiteParams, body: patchSuiteBody, response: { 200: suiteWithTasks }, tags } },
    (req) => patchSuite(rt, req, req.params, req.body),
  );
  api.delete(
    '/factory/:factory_uid/benchmarks/:suite_uid',
    { schema: { params: suiteParams, response: { 204: noContent() }, tags } },
    async (req, reply) => {
      await deleteSuite(rt, req, req.params);
      return reply.code(204).send(null);
    },
  );
}
