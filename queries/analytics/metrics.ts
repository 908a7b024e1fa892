/**
 * GET /factory/{factory_uid}/metrics (and, sharing its cache of answers, .../run-breakdown of
 * ./run-breakdown.ts): run counts summed from the factory's rollups (a year is at most 366 day
 * rows), pull-request figures from the pull-request read model over the range (medians cannot be
 * summed); with a series per period when asked for.
 */
import { z } from 'zod';
import { factoryParams, type FactoryDoc } from '../../commands/factory/public.js';
import { metricsResource, cycleTime } from '../../commands/analytics/public.js';
import type { Api } from '../../src/http/api.js';
import type { Runtime } from '../../src/runtime.js';
import { factoryRollupsProjection } from '../../projections/analytics/factory-rollups.js';
import { type PullRequestDoc, pullRequestsProjection } from '../../projections/analytics/pull-requests.js';
import { type AnswerCache, answerCache, scopeOf } from './analytics-answers.js';
import { runBreakdownRoute } from './run-breakdown.js';
import {
  byPeriod,
  factoryPrsBetween,
  median,
  periodParam,
  type Range,
  rangeParams,
  resolveRange,
  rowsOfRange,
} from './analytics-range.js';

const metricsQuery = z.object({ ...rangeParams, ...periodParam }).strict();

const iso = (ms: number) => new Date(ms).toISOString();

type Stage = 'kickoff_to_pr' | 'pr_to_first_review' | 'first_review_to_merge' | 'kickoff_to_merge';
const STAGES: Stage[] = ['kickoff_to_pr', 'pr_to_first_review', 'first_review_to_merge', 'kickoff_to_merge'];

/** The median time of each stage of the merged pull requests that measured it. */
function prLatency(merged: PullRequestDoc[]) {
  const times = merged.map(cycleTime);
  const stage = (s: Stage) => {
    const values = times.map((t) => t[s]).filter((v): v is number => v !== null);
    return { median_seconds: median(values), measured_pr_count: values.length };
  };
  return {
    merged_pr_count: merged.length,
    ...(Object.fromEntries(STAGES.map((s) => [s, stage(s)])) as Record<Stage, ReturnType<typeof stage>>),
  };
}

/** The pull-request figures of one range or period. */
function prFigures(firstSeen: PullRequestDoc[], merged: PullRequestDoc[], totalMerged: number, repos: string[]) {
  const observed = merged.filter((pr) => pr.history_complete);
  const autonomous = observed.filter((pr) => !pr.human_code_change).length;
  const measured = merged.filter((pr) => pr.additions !== null && pr.deletions !== null);
  return {
    pr_count: firstSeen.length,
    merged_pr_count: firstSeen.filter((pr) => pr.merged_at !== null).length,
    average_human_interactions_per_pr: firstSeen.length
      ? firstSeen.reduce((s, pr) => s + pr.human_interactions.total, 0) / firstSeen.length
      : null,
    autonomy: observed.length ? autonomous / observed.length : null,
    autonomy_funnel: {
      total_merged: totalMerged,
      factory_merged: merged.length,
      factory_merged_observed: observed.length,
      merged_without_human_code_change: autonomous,
      repos,
    },
    impact: {
      additions: measured.reduce((s, pr) => s + pr.additions!, 0),
      deletions: measured.reduce((s, pr) => s + pr.deletions!, 0),
      merged_pr_count: merged.length,
      measured_pr_count: measured.length,
    },
    pr_latency: prLatency(merged),
  };
}

/**
 * How many pull requests of the factory's repositories (by anyone) merged in the range and in
 * each period, as the factory's team's webhooks told of them: of its configured repositories,
 * else of those its runs' pull requests are in. Counted in the index, no document read.
 */
async function repoMerges(rt: Runtime, factory: FactoryDoc, merged: PullRequestDoc[], range: Range) {
  const prs = rt.readModel(pullRequestsProjection);
  const repos = factory.repositories.length
    ? factory.repositories.map((r) => `${r.owner}/${r.repo}`)
    : [...new Set(merged.map((pr) => pr.repo_full_name).filter((r): r is string => r !== null))];
  const keys = [...new Set(repos.map((r) => r.toLowerCase()))];
  const count = async (from: number, to: number) =>
    (
      await Promise.all(
        keys.map((repo_key) =>
          prs.count({ team_uid: factory.team_uid, repo_key, merged_at: { $gte: iso(from), $lt: iso(to) } }),
        ),
      )
    ).reduce((s, n) => s + n, 0);
  const [total, perPeriod] = await Promise.all([
    count(range.from, range.to),
    range.periods ? Promise.all(range.periods.map((p) => count(p.from, p.to))) : Promise.resolve(null),
  ]);
  return { repos, total, perPeriod };
}

async function metricsOf(rt: Runtime, factory: FactoryDoc, range: Range) {
  const prs = rt.readModel(pullRequestsProjection);
  const scope = scopeOf(factory, range);
  const [rows, firstSeen, merged] = await Promise.all([
    rowsOfRange(rt.readModel(factoryRollupsProjection), factory.uid, range),
    factoryPrsBetween(prs, factory.uid, 'first_seen_at', range),
    factoryPrsBetween(prs, factory.uid, 'merged_at', range),
  ]);
  const { repos, total, perPeriod } = await repoMerges(rt, factory, merged, range);
  const whole = {
    run_count: rows.reduce((s, r) => s + r.runs.total, 0),
    ...prFigures(firstSeen, merged, total, repos),
  };
  if (!range.periods) return { ...scope, ...whole };
  const rowsBy = byPeriod(range, rows, (r) => r.at);
  const seenBy = byPeriod(range, firstSeen, (pr) => pr.first_seen_at);
  const mergedBy = byPeriod(range, merged, (pr) => pr.merged_at);
  const periods = range.periods.map((_, i) => ({
    run_count: rowsBy[i]!.reduce((s, r) => s + r.runs.total, 0),
    ...prFigures(seenBy[i]!, mergedBy[i]!, perPeriod![i]!, repos),
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
