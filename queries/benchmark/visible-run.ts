/**
 * What the benchmark queries may show the caller: a factory of one of its teams, and a run of
 * that factory (and suite, when given); and the id parameter they take.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { benchmarkRunsProjection } from '../../projections/benchmark/benchmark-runs.js';
import { factoriesProjection } from '../../commands/factory/public.js';

export const idParam = z.string().trim().min(1).max(128);

/** The factory, if it is one of the caller's teams'. */
export async function visibleFactory(rt: Runtime, req: FastifyRequest, uid: string) {
  const factory = await rt.readModel(factoriesProjection).get(uid);
  if (!factory || !req.principal!.teams.has(factory.team_uid)) throw new NotFound('factory', uid);
  return factory;
}

/** The run, if it is of this factory (and suite, when given) and the caller's team. */
export async function visibleRun(
  rt: Runtime,
  req: FastifyRequest,
  factoryUid: string,
  suiteUid: string | null,
  runUid: string,
) {
  await visibleFactory(rt, req, factoryUid);
  const run = await rt.readModel(benchmarkRunsProjection).get(runUid);
  if (!run || run.factory_uid !== factoryUid || (suiteUid !== null && run.suite_uid !== suiteUid))
    throw new NotFound('benchmark run', runUid);
  return run;
}
