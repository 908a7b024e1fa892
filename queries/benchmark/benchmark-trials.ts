/**
 * A benchmark run's trials (GET .../runs/{run_uid}/trials, keyset-paged by trial number, or the
 * one trial an agent run was an attempt of) and one trial (GET .../trials/{trial_uid}).
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { repeatable } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { runParams, toTrialResource, trialResource, trialsPage } from '../../commands/benchmark/public.js';
import type { BenchmarkRunDoc } from '../../projections/benchmark/benchmark-run-docs.js';
import { idParam, type RunReads, runReads, visibleRun } from './visible-run.js';

const tags = ['benchmarks'];

export const BY_NUMBER: Sort = [
  ['number', 'asc'],
  ['id', 'asc'],
];

const trialsQuery = z
  .object({
    configuration_uid: repeatable(idParam),
    state: repeatable(z.enum(['pending', 'running', 'succeeded', 'failed', 'cancelled'])),
    agent_run_id: idParam.optional(),
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

const trialParams = runParams.extend({ trial_uid: idParam });
const trialQuery = z.object({ include: repeatable(z.enum(['results', 'details'])) }).strict();

type TrialsQuery = z.infer<typeof trialsQuery>;
type Expansions = { scores: boolean; metrics: boolean; attempts: boolean };

/** Zero or one trial: the one whose attempt that agent run was (judge runs match none). */
async function trialOfAgentRun(r: RunReads, run: BenchmarkRunDoc, agentRunId: string, expand: Expansions) {
  const link = await r.agentRuns.get(agentRunId);
  const trial = link?.benchmark_run_uid === run.uid ? await r.trials.get(link.trial_uid) : null;
  return {
    data: trial
      ? [{ ...toTrialResource(trial, run.scorers, expand), matched_attempt_number: link!.attempt_number }]
      : [],
    page_info: { has_next_page: false, next_cursor: null },
  };
}

async function trialsOf(r: RunReads, run: BenchmarkRunDoc, q: TrialsQuery) {
  const include = new Set(q.include ?? []);
  const expand = { scores: include.has('scores'), metrics: include.has('metrics'), attempts: include.has('history') };
  if (q.agent_run_id !== undefined) return trialOfAgentRun(r, run, q.agent_run_id, expand);
  const page = await r.trials.find({
    filter: {
      benchmark_run_uid: run.uid,
      ...(q.configuration_uid ? { configuration_uid: { $in: q.configuration_uid } } : {}),
      ...(q.state ? { state: { $in: q.state } } : {}),
    },
    sort: BY_NUMBER,
    limit: q.limit ?? 50,
    after: decodeCursor(q.cursor, BY_NUMBER),
    maxScan: r.rt.config.LIST_MAX_SCAN,
  });
  return {
    data: page.items.map((t) => toTrialResource(t, run.scorers, expand)),
    page_info: pageInfo(BY_NUMBER, page.next),
  };
}

async function oneTrial(
  r: RunReads,
  req: FastifyRequest,
  params: z.infer<typeof trialParams>,
  q: z.infer<typeof trialQuery>,
) {
  const { factory_uid, suite_uid, run_uid, trial_uid } = params;
  const run = await visibleRun(r, req, factory_uid, suite_uid, run_uid);
  const trial = await r.trials.get(trial_uid);
  if (!trial || trial.benchmark_run_uid !== run.uid) throw new NotFound('trial', trial_uid);
  const include = new Set(q.include ?? []);
  const results = include.has('results');
  const details = include.has('details');
  return toTrialResource(trial, run.scorers, {
    scores: results,
    metrics: results,
    attempts: details,
    judge_runs: details,
  });
}

export default function benchmarkTrialQueries(api: Api, rt: Runtime): void {
  const r = runReads(rt);
  api.get(
    '/factory/:factory_uid/benchmarks/:suite_uid/runs/:run_uid/trials',
    { schema: { params: runParams, querystring: trialsQuery, response: { 200: trialsPage }, tags } },
    async (req) => {
      const { factory_uid, suite_uid, run_uid } = req.params;
      return trialsOf(r, await visibleRun(r, req, factory_uid, suite_uid, run_uid), req.query);
    },
  );
  api.get(
    '/factory/:factory_uid/benchmarks/:suite_uid/runs/:run_uid/trials/:trial_uid',
    { schema: { params: trialParams, querystring: trialQuery, response: { 200: trialResource }, tags } },
    (req) => oneTrial(r, req, req.params, req.query),
  );
}
