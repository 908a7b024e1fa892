/**
 * The benchmark runs under /factory/{factory_uid}/benchmarks/{suite_uid}/runs: the list (state
 * filter, keyset-paged, newest first) and one run; also the hosted SDK's forms under
 * `.../benchmarks/runs`.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { limitParam, repeatable } from '../../src/http/schemas.js';
import type { Filter, Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { BENCHMARK_RUN_STATES } from '../../commands/benchmark/events.js';
import {
  factoryParams,
  RUN_INCLUDES,
  type RunInclude,
  runParams,
  runResource,
  runsPage,
  toRunResource,
} from '../../commands/benchmark/public.js';
import type { BenchmarkRunDoc } from '../../projections/benchmark/benchmark-run-docs.js';
import { suiteKey } from '../../projections/benchmark/benchmark-suites.js';
import { usersProjection } from '../../commands/user/public.js';
import { idParam, runReads, visibleFactory, visibleRun } from './visible-run.js';

const tags = ['benchmarks'];

/** The run queries' read models, and the users who launched runs. */
const reads = (rt: Runtime) => ({ ...runReads(rt), users: rt.readModel(usersProjection) });
type Reads = ReturnType<typeof reads>;

const NEWEST_FIRST: Sort = [
  ['created_at', 'desc'],
  ['id', 'desc'],
];

const runIncludes = repeatable(z.enum(RUN_INCLUDES));

const listQuery = z
  .object({
    state: repeatable(z.enum(BENCHMARK_RUN_STATES)),
    limit: limitParam(100, 50),
    cursor: z.string().max(1000).optional(),
    include: runIncludes,
  })
  .strict();

/** The runs as resources, with their creators' names and emails when `creator` is included. */
async function answers(
  users: Reads['users'],
  docs: BenchmarkRunDoc[],
  req: FastifyRequest,
  include: readonly RunInclude[] = [],
) {
  const chosen = new Set(include);
  const profiles = chosen.has('creator')
    ? new Map(
        [...(await users.getMany([...new Set(docs.map((d) => d.creator.uid))]))].map(([uid, u]) => [
          uid,
          { display_name: u.display_name, email: u.email },
        ]),
      )
    : undefined;
  return docs.map((d) => toRunResource(d, req.now, chosen, profiles));
}

async function list(r: Reads, req: FastifyRequest, base: Filter, q: z.infer<typeof listQuery>) {
  const page = await r.runs.find({
    filter: { ...base, ...(q.state ? { state: { $in: q.state } } : {}) },
    sort: NEWEST_FIRST,
    limit: q.limit,
    after: decodeCursor(q.cursor, NEWEST_FIRST),
    maxScan: r.rt.config.LIST_MAX_SCAN,
  });
  const data = await answers(r.users, page.items, req, q.include);
  return { data, runs: data, page_info: pageInfo(NEWEST_FIRST, page.next) };
}

function listRoutes(api: Api, r: Reads) {
  // A deleted suite's runs stay listed; an unknown suite lists none.
  api.get(
    '/factory/:factory_uid/benchmarks/:suite_uid/runs',
    {
      schema: {
        params: factoryParams.extend({ suite_uid: idParam }),
        querystring: listQuery,
        response: { 200: runsPage },
        tags,
      },
    },
    async (req) => {
      const factory = await visibleFactory(r.factories, req, req.params.factory_uid);
      return list(r, req, { suite_key: suiteKey(factory.uid, req.params.suite_uid) }, req.query);
    },
  );
  api.get(
    '/factory/:factory_uid/benchmarks/runs',
    {
      schema: {
        params: factoryParams,
        querystring: listQuery.safeExtend({ suite_uid: idParam.optional() }),
        response: { 200: runsPage },
        tags,
      },
    },
    async (req) => {
      const factory = await visibleFactory(r.factories, req, req.params.factory_uid);
      const { suite_uid, ...q } = req.query;
      const filter = suite_uid ? { suite_key: suiteKey(factory.uid, suite_uid) } : { factory_uid: factory.uid };
      return list(r, req, filter, q);
    },
  );
}

function oneRunRoutes(api: Api, r: Reads) {
  const oneRunSchema = {
    querystring: z.object({ include: runIncludes }).strict(),
    response: { 200: runResource },
    tags,
  };
  api.get(
    '/factory/:factory_uid/benchmarks/:suite_uid/runs/:run_uid',
    { schema: { ...oneRunSchema, params: runParams } },
    async (req) => {
      const { factory_uid, suite_uid, run_uid } = req.params;
      const run = await visibleRun(r, req, factory_uid, suite_uid, run_uid);
      return (await answers(r.users, [run], req, req.query.include))[0]!;
    },
  );
  api.get(
    '/factory/:factory_uid/benchmarks/runs/:run_uid',
    { schema: { ...oneRunSchema, params: factoryParams.extend({ run_uid: idParam }) } },
    async (req) => {
      const run = await visibleRun(r, req, req.params.factory_uid, null, req.params.run_uid);
      return (await answers(r.users, [run], req, req.query.include))[0]!;
    },
  );
}

export default function benchmarkRunQueries(api: Api, rt: Runtime): void {
  const r = reads(rt);
  listRoutes(api, r);
  oneRunRoutes(api, r);
}
