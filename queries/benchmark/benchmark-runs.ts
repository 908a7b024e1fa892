/**
 * The read side of benchmark runs under /factory/{factory_uid}/benchmarks/{suite_uid}/runs: the
 * list (state filter, keyset-paged, newest first), one run, its results (summed from the
 * per-configuration tallies, or from the per-(task, configuration) cells when tasks or tags choose
 * the trials), its trials (keyset-paged by trial number) and one trial; also the hosted SDK's
 * forms under `.../benchmarks/runs`.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { limitParam, repeatable } from '../../src/http/schemas.js';
import { InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Filter, Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { BENCHMARK_RUN_STATES } from '../../commands/benchmark/events.js';
import {
  factoryParams,
  resultsOf,
  resultsResource,
  RUN_INCLUDES,
  type RunInclude,
  runParams,
  runResource,
  runsPage,
  toRunResource,
  toTrialResource,
  trialResource,
  trialsPage,
} from '../../commands/benchmark/public.js';
import type { BenchmarkRunDoc } from '../../projections/benchmark/benchmark-run-docs.js';
import { benchmarkRunsProjection } from '../../projections/benchmark/benchmark-runs.js';
import { addTally, type Tally } from '../../projections/benchmark/tallies.js';
import { suiteKey } from '../../projections/benchmark/benchmark-suites.js';
import { factoriesProjection } from '../../commands/factory/public.js';
import { usersProjection } from '../../commands/user/public.js';

const NEWEST_FIRST: Sort = [
  ['created_at', 'desc'],
  ['id', 'desc'],
];
const BY_NUMBER: Sort = [
  ['number', 'asc'],
  ['id', 'asc'],
];

const id = z.string().trim().min(1).max(128);

const runIncludes = repeatable(z.enum(RUN_INCLUDES));

const listQuery = z
  .object({
    state: repeatable(z.enum(BENCHMARK_RUN_STATES)),
    limit: limitParam(100, 50),
    cursor: z.string().max(1000).optional(),
    include: runIncludes,
  })
  .strict();

const resultsQuery = z
  .object({
    task_uid: repeatable(id),
    tag: repeatable(z.string().trim().min(1).max(64)),
    configuration_uid: repeatable(id),
    scorer_uid: repeatable(id),
    include: repeatable(z.enum(['trials'])),
  })
  .strict();

const trialsQuery = z
  .object({
    configuration_uid: repeatable(id),
    state: repeatable(z.enum(['pending', 'running', 'succeeded', 'failed', 'cancelled'])),
    agent_run_id: id.optional(),
    limit: z.coerce.number().int().min(1).max(100).optional(),
    cursor: z.string().max(1000).optional(),
    include: repeatable(z.enum(['scores', 'metrics', 'history'])),
  })
  .strict()
  .superRefine((q, ctx) => {
    if (q.agent_run_id === undefined) return;
    const others = (['configuration_uid', 'state', 'cursor'] as const).filter((k) => q[k] !== undefined);
    for (const k of others)
      ctx.addIssue({ code: 'custom', path: [k], message: 'agent_run_id takes no cursor and no other filter' });
    if (q.limit !== undefined && q.limit !== 1)
      ctx.addIssue({ code: 'custom', path: ['limit'], message: 'agent_run_id takes limit=1 or none' });
  });

const trialParams = runParams.extend({ trial_uid: id });
const trialQuery = z.object({ include: repeatable(z.enum(['results', 'details'])) }).strict();

export default function benchmarkRunQueries(api: Api, rt: Runtime): void {
  const tags = ['benchmarks'];
  const factories = rt.readModel(factoriesProjection);
  const runs = rt.readModel(benchmarkRunsProjection);
  const trials = rt.readTable(benchmarkRunsProjection, 'trials');
  const cells = rt.readTable(benchmarkRunsProjection, 'cells');
  const agentRuns = rt.readTable(benchmarkRunsProjection, 'agent_runs');
  const users = rt.readModel(usersProjection);

  async function visibleFactory(req: FastifyRequest, uid: string) {
    const factory = await factories.get(uid);
    if (!factory || !req.principal!.teams.has(factory.team_uid)) throw new NotFound('factory', uid);
    return factory;
  }

  /** The run, if it is of this factory (and suite, when given) and the caller's team. */
  async function visibleRun(req: FastifyRequest, factoryUid: string, suiteUid: string | null, runUid: string) {
    await visibleFactory(req, factoryUid);
    const run = await runs.get(runUid);
    if (!run || run.factory_uid !== factoryUid || (suiteUid !== null && run.suite_uid !== suiteUid))
      throw new NotFound('benchmark run', runUid);
    return run;
  }

  async function answers(docs: BenchmarkRunDoc[], req: FastifyRequest, include: readonly RunInclude[] = []) {
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

  async function list(req: FastifyRequest, base: Filter, q: z.infer<typeof listQuery>) {
    const page = await runs.find({
      filter: { ...base, ...(q.state ? { state: { $in: q.state } } : {}) },
      sort: NEWEST_FIRST,
      limit: q.limit,
      after: decodeCursor(q.cursor, NEWEST_FIRST),
      maxScan: rt.config.LIST_MAX_SCAN,
    });
    const data = await answers(page.items, req, q.include);
    return { data, runs: data, page_info: pageInfo(NEWEST_FIRST, page.next) };
  }

  // A deleted suite's runs stay listed; an unknown suite lists none.
  api.get(
    '/factory/:factory_uid/benchmarks/:suite_uid/runs',
    {
      schema: {
        params: factoryParams.extend({ suite_uid: id }),
        querystring: listQuery,
        response: { 200: runsPage },
        tags,
      },
    },
    async (req) => {
      const factory = await visibleFactory(req, req.params.factory_uid);
      return list(req, { suite_key: suiteKey(factory.uid, req.params.suite_uid) }, req.query);
    },
  );

  api.get(
    '/factory/:factory_uid/benchmarks/runs',
    {
      schema: {
        params: factoryParams,
        querystring: listQuery.safeExtend({ suite_uid: id.optional() }),
        response: { 200: runsPage },
        tags,
      },
    },
    async (req) => {
      const factory = await visibleFactory(req, req.params.factory_uid);
      const { suite_uid, ...q } = req.query;
      return list(req, suite_uid ? { suite_key: suiteKey(factory.uid, suite_uid) } : { factory_uid: factory.uid }, q);
    },
  );

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
      const run = await visibleRun(req, factory_uid, suite_uid, run_uid);
      return (await answers([run], req, req.query.include))[0]!;
    },
  );
  api.get(
    '/factory/:factory_uid/benchmarks/runs/:run_uid',
    { schema: { ...oneRunSchema, params: factoryParams.extend({ run_uid: id }) } },
    async (req) => {
      const run = await visibleRun(req, req.params.factory_uid, null, req.params.run_uid);
      return (await answers([run], req, req.query.include))[0]!;
    },
  );

  // ---- results -------------------------------------------------------------------------------------

  async function results(req: FastifyRequest, run: BenchmarkRunDoc, q: z.infer<typeof resultsQuery>) {
    let tallies = new Map(Object.entries(run.by_configuration));
    let chosenTasks: Set<string> | null = null;
    if (q.task_uid || q.tag) {
      const known = new Set(run.tasks.map((t) => t.uid));
      const unknown = (q.task_uid ?? []).filter((t) => !known.has(t));
      if (unknown.length)
        throw new InvalidRequest(`no task ${unknown.join(', ')} in the run`, [
          { path: 'querystring.task_uid', message: `no task ${unknown.join(', ')} in the run` },
        ]);
      // Tasks named and tasks tagged: each filter must match.
      chosenTasks = new Set(
        run.tasks
          .filter((t) => !q.task_uid || q.task_uid.includes(t.uid))
          .filter((t) => !q.tag || t.tags.some((tag) => q.tag!.includes(tag)))
          .map((t) => t.uid),
      );
      const rows = chosenTasks.size
        ? await findAll(cells, {
            filter: { benchmark_run_uid: run.uid, task_uid: { $in: [...chosenTasks] } },
            sort: [['id', 'asc']],
            limit: 1000,
          })
        : [];
      tallies = new Map<string, Tally>();
      for (const c of rows)
        tallies.set(c.configuration_uid, addTally(tallies.get(c.configuration_uid) ?? null, c.tally));
    }
    const answer = resultsOf(run, tallies, req.now, {
      configurations: q.configuration_uid ? new Set(q.configuration_uid) : null,
      scorers: q.scorer_uid ? new Set(q.scorer_uid) : null,
    });
    if (!q.include?.includes('trials')) return answer;
    const filter: Filter = {
      benchmark_run_uid: run.uid,
      ...(chosenTasks ? { task_uid: { $in: [...chosenTasks] } } : {}),
    };
    const used = await findAll(trials, { filter, sort: BY_NUMBER, limit: 1000 });
    return {
      ...answer,
      trials: used.map((t) => toTrialResource(t, run.scorers, { scores: true, metrics: true, attempts: true })),
    };
  }

  const resultsSchema = { querystring: resultsQuery, response: { 200: resultsResource }, tags };
  api.get(
    '/factory/:factory_uid/benchmarks/:suite_uid/runs/:run_uid/results',
    { schema: { ...resultsSchema, params: runParams } },
    async (req) => {
      const { factory_uid, suite_uid, run_uid } = req.params;
      return results(req, await visibleRun(req, factory_uid, suite_uid, run_uid), req.query);
    },
  );
  api.get(
    '/factory/:factory_uid/benchmarks/runs/:run_uid/results',
    { schema: { ...resultsSchema, params: factoryParams.extend({ run_uid: id }) } },
    async (req) => results(req, await visibleRun(req, req.params.factory_uid, null, req.params.run_uid), req.query),
  );

  // ---- trials ----------------------------------------------------------------------------------------

  api.get(
    '/factory/:factory_uid/benchmarks/:suite_uid/runs/:run_uid/trials',
    { schema: { params: runParams, querystring: trialsQuery, response: { 200: trialsPage }, tags } },
    async (req) => {
      const { factory_uid, suite_uid, run_uid } = req.params;
      const run = await visibleRun(req, factory_uid, suite_uid, run_uid);
      const q = req.query;
      const include = new Set(q.include ?? []);
      const expand = {
        scores: include.has('scores'),
        metrics: include.has('metrics'),
        attempts: include.has('history'),
      };
      if (q.agent_run_id !== undefined) {
        // Zero or one trial: the one whose attempt that agent run was (judge runs match none).
        const link = await agentRuns.get(q.agent_run_id);
        const trial = link?.benchmark_run_uid === run.uid ? await trials.get(link.trial_uid) : null;
        return {
          data: trial
            ? [{ ...toTrialResource(trial, run.scorers, expand), matched_attempt_number: link!.attempt_number }]
            : [],
          page_info: { has_next_page: false, next_cursor: null },
        };
      }
      const page = await trials.find({
        filter: {
          benchmark_run_uid: run.uid,
          ...(q.configuration_uid ? { configuration_uid: { $in: q.configuration_uid } } : {}),
          ...(q.state ? { state: { $in: q.state } } : {}),
        },
        sort: BY_NUMBER,
        limit: q.limit ?? 50,
        after: decodeCursor(q.cursor, BY_NUMBER),
        maxScan: rt.config.LIST_MAX_SCAN,
      });
      return {
        data: page.items.map((t) => toTrialResource(t, run.scorers, expand)),
        page_info: pageInfo(BY_NUMBER, page.next),
      };
    },
  );

  api.get(
    '/factory/:factory_uid/benchmarks/:suite_uid/runs/:run_uid/trials/:trial_uid',
    { schema: { params: trialParams, querystring: trialQuery, response: { 200: trialResource }, tags } },
    async (req) => {
      const { factory_uid, suite_uid, run_uid, trial_uid } = req.params;
      const run = await visibleRun(req, factory_uid, suite_uid, run_uid);
      const trial = await trials.get(trial_uid);
      if (!trial || trial.benchmark_run_uid !== run.uid) throw new NotFound('trial', trial_uid);
      const include = new Set(req.query.include ?? []);
      const results = include.has('results');
      const details = include.has('details');
      return toTrialResource(trial, run.scorers, {
        scores: results,
        metrics: results,
        attempts: details,
        judge_runs: details,
      });
    },
  );
}
