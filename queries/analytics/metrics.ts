/**
 * GET /factory/{factory_uid}/metrics (and, sharing its cache of answers, .../run-breakdown of
 * ./run-breakdown.ts): run counts summed from the factory's rollups, pull-request figures from
 * the pull-request buckets (medians from their sketches), each the few rows that tile the range
 * or each period; with a series per period when asked for.
 */
import { z } from 'zod';
import { factoryParams, type FactoryDoc } from '../../commands/factory/public.js';
import { metricsResource } from '../../commands/analytics/public.js';
import type { Api } from '../../src/http/api.js';
import type { Runtime } from '../../src/runtime.js';
import { factoryRollupsProjection, type RollupDoc } from '../../projections/analytics/factory-rollups.js';
import { type PrBucket, type RepoMergeBucket, repoOwner } from '../../projections/analytics/pr-buckets.js';
import { pullRequestsProjection } from '../../projections/analytics/pull-requests.js';
import { type AnswerCache, answerCache, scopeOf } from './analytics-answers.js';
import { runBreakdownRoute } from './run-breakdown.js';
import { periodParam, type Range, rangeParams, resolveRange, rowsOfRange } from './analytics-range.js';
import { sumMerged, sumSeen } from './pr-figures.js';

const metricsQuery = z.object({ ...rangeParams, ...periodParam }).strict();

/** The pull-request figures of one range or period. */
function prFigures(rows: readonly PrBucket[], totalMerged: number, repos: string[]) {
  const seen = sumSeen(rows);
  const merged = sumMerged(rows);
  return {
    pr_count: seen.count,
    merged_pr_count: seen.merged,
    average_human_interactions_per_pr: seen.count ? seen.interactions / seen.count : null,
    autonomy: merged.observed ? merged.autonomous / merged.observed : null,
    autonomy_funnel: {
      total_merged: totalMerged,
      factory_merged: merged.count,
      factory_merged_observed: merged.observed,
      merged_without_human_code_change: merged.autonomous,
      repos,
    },
    impact: {
      additions: merged.additions,
      deletions: merged.deletions,
      merged_pr_count: merged.count,
      measured_pr_count: merged.measured,
    },
    pr_latency: { merged_pr_count: merged.count, ...merged.stages },
  };
}

/**
 * How many pull requests of the factory's repositories (by anyone) merged in the range and in
 * each period, as the factory's team's webhooks told of them: of its configured repositories,
 * else of those its runs' merged pull requests are in; from each repository's merge rows.
 */
async function repoMerges(rt: Runtime, factory: FactoryDoc, prRows: readonly PrBucket[], range: Range) {
  const merges = rt.readTable(pullRequestsProjection, 'repo_merges');
  const repos = factory.repositories.length
    ? factory.repositories.map((r) => `${r.owner}/${r.repo}`)
    : sumMerged(prRows).repos;
  const keys = [...new Set(repos.map((r) => r.toLowerCase()))];
  const perRepo = await Promise.all(keys.map((key) => rowsOfRange(merges, repoOwner(factory.team_uid, key), range)));
  const count = (rows: readonly RepoMergeBucket[]) => rows.reduce((s, r) => s + r.merged, 0);
  const total = perRepo.reduce((s, r) => s + count(r.whole), 0);
  const perPeriod = range.periods?.map((_, i) => perRepo.reduce((s, r) => s + count(r.periods![i]!), 0)) ?? null;
  return { repos, total, perPeriod };
}

async function metricsOf(rt: Runtime, factory: FactoryDoc, range: Range) {
  const scope = scopeOf(factory, range);
  const [runs, prs] = await Promise.all([
    rowsOfRange(rt.readModel(factoryRollupsProjection), factory.uid, range),
    rowsOfRange(rt.readTable(pullRequestsProjection, 'buckets'), factory.uid, range),
  ]);
  const { repos, total, perPeriod } = await repoMerges(rt, factory, prs.whole, range);
  const runCount = (rows: readonly RollupDoc[]) => rows.reduce((s, r) => s + r.runs.total, 0);
  const whole = { run_count: runCount(runs.whole), ...prFigures(prs.whole, total, repos) };
  if (!range.periods) return { ...scope, ...whole };
  const periods = range.periods.map((_, i) => ({
    run_count: runCount(runs.periods![i]!),
    ...prFigures(prs.periods![i]!, perPeriod![i]!, repos),
  }));
  const series = <K extends keyof (typeof periods)[number]>(k: K) => periods.map((p) => p[k]);
  return {
    ...scope,
    ...whole,
    period_list: range.periods.map((p) => p.label),
    series: {
      run_count: series('run_count'),
      pr_count: series('pr_count'),
      merged_pr_count: series('merged_pr_count'),
      average_human_interactions_per_pr: series('average_human_interactions_per_pr'),
      autonomy: series('autonomy'),
      autonomy_funnel: series('autonomy_funnel'),
      impact: series('impact'),
      pr_latency: series('pr_latency'),
    },
  };
}

function metricsRoute(api: Api, rt: Runtime, answers: AnswerCache): void {
  api.get(
    '/factory/:factory_uid/metrics',
    {
      schema: {
        params: factoryParams,
        querystring: metricsQuery,
        response: { 200: metricsResource },
        tags: ['metrics'],
      },
    },
    async (req, reply) => {
      const uid = req.params.factory_uid;
      const range = resolveRange(req.query, rt.clock.now());
      const key = `metrics:${uid}:${range.start_date}:${range.end_date}:${req.query.group_by_period ?? ''}`;
      return answers.send(req, reply, uid, key, metricsResource, (factory) => metricsOf(rt, factory, range));
    },
  );
}

/** The metrics and the run breakdown, sharing one cache of answers. */
export default function metricsQueries(api: Api, rt: Runtime): void {
  const answers = answerCache(rt);
  metricsRoute(api, rt, answers);
  runBreakdownRoute(api, rt, answers);
}
