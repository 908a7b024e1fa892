/**
 * GET /factory/{factory_uid}/benchmarks (suites, keyset-paged, newest first), GET .../{suite_uid}
 * (with its tasks and launch defaults) and GET .../{suite_uid}/tasks/{task_uid}; also the hosted
 * SDK's forms under `.../benchmarks/suites`.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { limitParam } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import {
  factoryParams,
  suiteParams,
  suitesPage,
  suiteWithTasks,
  taskParams,
  taskResource,
  toSuiteResource,
  toTaskResource,
} from '../../commands/benchmark/public.js';
import { benchmarkSuitesProjection, suiteKey } from '../../projections/benchmark/benchmark-suites.js';
import { factoriesProjection } from '../../commands/factory/public.js';
import { visibleFactory } from './visible-run.js';

const NEWEST_FIRST: Sort = [
  ['created_at', 'desc'],
  ['id', 'desc'],
];

const listQuery = z.object({ limit: limitParam(100, 50), cursor: z.string().max(1000).optional() }).strict();

export default function benchmarkQueries(api: Api, rt: Runtime): void {
  const tags = ['benchmarks'];
  const factories = rt.readModel(factoriesProjection);
  const suites = rt.readModel(benchmarkSuitesProjection);
  const tasks = rt.readTable(benchmarkSuitesProjection, 'tasks');

  async function suite(req: FastifyRequest, factoryUid: string, suiteUid: string) {
    await visibleFactory(factories, req, factoryUid);
    const key = suiteKey(factoryUid, suiteUid);
    const doc = await suites.get(key);
    if (!doc) throw new NotFound('suite', suiteUid);
    const list = await findAll(tasks, { filter: { suite_key: key }, sort: [['number', 'asc']], limit: 100 });
    return { ...toSuiteResource(doc), tasks: list.map(toTaskResource), spawnable_descendant_agent_uids: [] };
  }

  for (const path of ['/factory/:factory_uid/benchmarks', '/factory/:factory_uid/benchmarks/suites'])
    api.get(
      path,
      { schema: { params: factoryParams, querystring: listQuery, response: { 200: suitesPage }, tags } },
      async (req) => {
        const factory = await visibleFactory(factories, req, req.params.factory_uid);
        const page = await suites.find({
          filter: { factory_uid: factory.uid },
          sort: NEWEST_FIRST,
          limit: req.query.limit,
          after: decodeCursor(req.query.cursor, NEWEST_FIRST),
        });
        const data = page.items.map(toSuiteResource);
        return { data, suites: data, page_info: pageInfo(NEWEST_FIRST, page.next) };
      },
    );

  for (const path of [
    '/factory/:factory_uid/benchmarks/:suite_uid',
    '/factory/:factory_uid/benchmarks/suites/:suite_uid',
  ])
    api.get(path, { schema: { params: suiteParams, response: { 200: suiteWithTasks }, tags } }, (req) =>
      suite(req, req.params.factory_uid, req.params.suite_uid),
    );

  api.get(
    '/factory/:factory_uid/benchmarks/:suite_uid/tasks/:task_uid',
    { schema: { params: taskParams, response: { 200: taskResource }, tags } },
    async (req) => {
      const { factory_uid, suite_uid, task_uid } = req.params;
      await visibleFactory(factories, req, factory_uid);
      const doc = await tasks.get(task_uid);
      if (!doc || doc.suite_key !== suiteKey(factory_uid, suite_uid) || !(await suites.get(doc.suite_key)))
        throw new NotFound('task', task_uid);
      return toTaskResource(doc);
    },
  );
}
