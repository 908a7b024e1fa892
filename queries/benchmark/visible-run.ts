/**
 * What the benchmark queries read (opened once, when their routes are registered) and may show
 * the caller: a factory of one of its teams, and a run of that factory (and suite, when given);
 * and the id parameter they take.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { NotFound } from '../../src/kernel/errors.js';
import type { Collection } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { benchmarkRunsProjection } from '../../projections/benchmark/benchmark-runs.js';
import { type FactoryDoc, factoriesProjection } from '../../commands/factory/public.js';

export const idParam = z.string().trim().min(1).max(128);

/** The read models of the run queries. */
export const runReads = (rt: Runtime) => ({
  rt,
  factories: rt.readModel(factoriesProjection),
  runs: rt.readModel(benchmarkRunsProjection),
  trials: rt.readTable(benchmarkRunsProjection, 'trials'),
  cells: rt.readTable(benchmarkRunsProjection, 'cells'),
  agentRuns: rt.readTable(benchmarkRunsProjection, 'agent_runs'),
});

export type RunReads = ReturnType<typeof runReads>;

/** The factory, if it is one of the caller's teams'. */
export async function visibleFactory(factories: Collection<FactoryDoc>, req: FastifyRequest, uid: string) {
  const factory = await factories.get(uid);
  if (!factory || !req.principal!.teams.has(factory.team_uid)) throw new NotFound('factory', uid);
  return factory;
}

/** The run, if it is of this factory (and suite, when given) and the caller's team. */
export async function visibleRun(
  r: RunReads,
  req: FastifyRequest,
  factoryUid: string,
  suiteUid: string | null,
  runUid: string,
) {
  await visibleFactory(r.factories, req, factoryUid);
  const run = await r.runs.get(runUid);
  if (!run || run.factory_uid !== factoryUid || (suiteUid !== null && run.suite_uid !== suiteUid))
    throw new NotFound('benchmark run', runUid);
  return run;
}
