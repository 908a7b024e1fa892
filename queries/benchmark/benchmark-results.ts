/**
 * The results of a benchmark run (GET .../runs/{run_uid}/results, and the hosted SDK's form under
 * `.../benchmarks/runs`): summed from the per-configuration tallies, or from the per-(task,
 * configuration) cells when tasks or tags choose the trials; with the trials used when asked for.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { repeatable } from '../../src/http/schemas.js';
import { InvalidRequest } from '../../src/kernel/errors.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Filter } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import {
  factoryParams,
  resultsOf,
  resultsResource,
  runParams,
  toTrialResource,
} from '../../commands/benchmark/public.js';
import type { BenchmarkRunDoc } from '../../projections/benchmark/benchmark-run-docs.js';
import { addTally, type Tally } from '../../projections/benchmark/tallies.js';
import { BY_NUMBER } from './benchmark-trials.js';
import { idParam, type RunReads, runReads, visibleRun } from './visible-run.js';

const tags = ['benchmarks'];

const resultsQuery = z
  .object({
    task_uid: repeatable(idParam),
    tag: repeatable(z.string().trim().min(1).max(64)),
    configuration_uid: repeatable(idParam),
    scorer_uid: repeatable(idParam),
    include: repeatable(z.enum(['trials'])),
  })
  .strict();

type ResultsQuery = z.infer<typeof resultsQuery>;

/** The tasks named and the tasks tagged (each filter must match); every task named must be the run's. */
function chosenTasksOf(run: BenchmarkRunDoc, q: ResultsQuery) {
  const known = new Set(run.tasks.map((t) => t.uid));
  const unknown = (q.task_uid ?? []).filter((t) => !known.has(t));
  if (unknown.length)
    throw new InvalidRequest(`no task ${unknown.join(', ')} in the run`, [
      { path: 'querystring.task_uid', message: `no task ${unknown.join(', ')} in the run` },
    ]);
  return new Set(
    run.tasks
      .filter((t) => !q.task_uid || q.task_uid.includes(t.uid))
      .filter((t) => !q.tag || t.tags.some((tag) => q.tag!.includes(tag)))
      .map((t) => t.uid),
  );
}

/** The tallies of each configuration over the chosen tasks only: their cells, summed. */
async function talliesOfTasks(r: RunReads, run: BenchmarkRunDoc, chosenTasks: Set<string>) {
  const rows = chosenTasks.size
    ? await findAll(r.cells, {
        filter: { benchmark_run_uid: run.uid, task_uid: { $in: [...chosenTasks] } },
        sort: [['id', 'asc']],
        limit: 1000,
      })
    : [];
  const tallies = new Map<string, Tally>();
  for (const c of rows) tallies.set(c.configuration_uid, addTally(tallies.get(c.configuration_uid) ?? null, c.tally));
  return tallies;
}

async function results(r: RunReads, req: FastifyRequest, run: BenchmarkRunDoc, q: ResultsQuery) {
  const chosenTasks = q.task_uid || q.tag ? chosenTasksOf(run, q) : null;
  const tallies = chosenTasks
    ? await talliesOfTasks(r, run, chosenTasks)
    : new Map(Object.entries(run.by_configuration));
  const answer = resultsOf(run, tallies, req.now, {
    configurations: q.configuration_uid ? new Set(q.configuration_uid) : null,
    scorers: q.scorer_uid ? new Set(q.scorer_uid) : null,
  });
  if (!q.include?.includes('trials')) return answer;
  const filter: Filter = {
    benchmark_run_uid: run.uid,
    ...(chosenTasks ? { task_uid: { $in: [...chosenTasks] } } : {}),
  };
  const used = await findAll(r.trials, { filter, sort: BY_NUMBER, limit: 1000 });
  return {
    ...answer,
    trials: used.map((t) => toTrialResource(t, run.scorers, { scores: true, metrics: true, attempts: true })),
  };
}

export default function benchmarkResultQueries(api: Api, rt: Runtime): void {
  const r = runReads(rt);
  const resultsSchema = { querystring: resultsQuery, response: { 200: resultsResource }, tags };
  api.get(
    '/factory/:factory_uid/benchmarks/:suite_uid/runs/:run_uid/results',
    { schema: { ...resultsSchema, params: runParams } },
    async (req) => {
      const { factory_uid, suite_uid, run_uid } = req.params;
      return results(r, req, await visibleRun(r, req, factory_uid, suite_uid, run_uid), req.query);
    },
  );
  api.get(
    '/factory/:factory_uid/benchmarks/runs/:run_uid/results',
    { schema: { ...resultsSchema, params: factoryParams.extend({ run_uid: idParam }) } },
    async (req) =>
      results(r, req, await visibleRun(r, req, req.params.factory_uid, null, req.params.run_uid), req.query),
  );
}
