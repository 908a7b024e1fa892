/**
 * GET /factory/{factory_uid}/metrics and GET /factory/{factory_uid}/metrics/run-breakdown: run
 * counts summed from the factory's rollups (a year is at most 366 day rows), pull-request figures
 * from the pull-request read model over the range (medians cannot be summed).
 */
import { z } from 'zod';
import { factoryParams, type FactoryDoc } from '../../commands/factory/public.js';
import { metricsResource, RUN_GROUPS, runBreakdownResource, cycleTime } from '../../commands/analytics/public.js';
import type { Api } from '../../src/http/api.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Collection } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import {
  factoryRollupsProjection,
  type RollupDoc,
  type RunCounts,
  UNKNOWN_KEY,
} from '../../projections/analytics/factory-rollups.js';
import { type PullRequestDoc, pullRequestsProjection } from '../../projections/analytics/pull-requests.js';
import { CATALOGUE_ID, modelsProjection } from '../../commands/model/public.js';
import { answerCache, scopeOf, sendCsv, toCsv, wantsCsv } from './analytics-answers.js';
import {
  median,
  periodIndex,
  periodParam,
  type Range,
  rangeParams,
  resolveRange,
  rowsOfRange,
} from './analytics-range.js';
import { own, putOwn } from '../../src/own-keys.js';

const metricsQuery = z.object({ ...rangeParams, ...periodParam }).strict();
const breakdownQuery = z.object({ group_by: z.enum(RUN_GROUPS), ...rangeParams, ...periodParam }).strict();

const iso = (ms: number) => new Date(ms).toISOString();

/** The listed pull requests of the factory whose `field` falls in the range. */
export const factoryPrsBetween = (
  prs: Collection<PullRequestDoc>,
  factory: string,
  field: 'first_seen_at' | 'merged_at',
  range: Range,
) =>
  findAll(prs, {
    filter: { factory_uid: factory, listed: true, [field]: { $gte: iso(range.from), $lt: iso(range.to) } },
    sort: [
      [field, 'asc'],
      ['id', 'asc'],
    ],
    limit: 1000,
  });

/** Which period each document falls in by `at`, as lists aligned to the periods. */
export function byPeriod<T>(range: Range, items: readonly T[], at: (item: T) => string | null): T[][] {
  const out = range.periods!.map((): T[] => []);
  for (const item of items) {
    const t = at(item);
    const i = t === null ? -1 : periodIndex(range, Date.parse(t));
    if (i >= 0) out[i]!.push(item);
  }
  return out;
}

type Stage = 'kickoff_to_pr' | 'pr_to_first_review' | 'first_review_to_merge' | 'kickoff_to_merge';
const STAGES: Stage[] = ['kickoff_to_pr', 'pr_to_first_review', 'first_review_to_merge', 'kickoff_to_merge'];

/** The pull-request figures of one range or period. */
function prFigures(firstSeen: PullRequestDoc[], merged: PullRequestDoc[], totalMerged: number, repos: string[]) {
  const observed = merged.filter((pr) => pr.history_complete);
  const autonomous = observed.filter((pr) => !pr.human_code_change).length;
  const measured = merged.filter((pr) => pr.additions !== null && pr.deletions !== null);
  const times = merged.map(cycleTime);
  const stage = (s: Stage) => {
    const values = times.map((t) => t[s]).filter((v): v is number => v !== null);
    return { median_seconds: median(values), measured_pr_count: values.length };
  };
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
    pr_latency: {
      merged_pr_count: merged.length,
      ...(Object.fromEntries(STAGES.map((s) => [s, stage(s)])) as Record<Stage, ReturnType<typeof stage>>),
    },
  };
}

/** The keys of one run-breakdown group in a run contribution. */
function groupCounts(runs: RunCounts, groupBy: (typeof RUN_GROUPS)[number]): Record<string, number> {
  switch (groupBy) {
    case 'root_vs_subrun':
      return {
        ...(runs.root ? { ROOT: runs.root } : {}),
        ...(runs.total - runs.root ? { SUBRUN: runs.total - runs.root } : {}),
      };
    default:
      return runs[groupBy];
  }
}

const sumCounts = (rows: readonly RollupDoc[], groupBy: (typeof RUN_GROUPS)[number]) => {
  const groups: Record<string, number> = {};
  let total = 0;
  let root = 0;
  for (const row of rows) {
    total += row.runs.total;
    root += row.runs.root;
    for (const [k, n] of Object.entries(groupCounts(row.runs, groupBy))) putOwn(groups, k, (own(groups, k) ?? 0) + n);
  }
  return { total, root, groups };
};

/** Largest first, UNKNOWN last, then by key. */
export const byTotalUnknownLast =
  <T extends { key: string }>(total: (g: T) => number) =>
  (a: T, b: T) =>
    Number(a.key === UNKNOWN_KEY) - Number(b.key === UNKNOWN_KEY) || total(b) - total(a) || a.key.localeCompare(b.key);

export default function metricsQueries(api: Api, rt: Runtime): void {
  const tags = ['metrics'];
  const rollups = rt.readModel(factoryRollupsProjection);
  const prs = rt.readModel(pullRequestsProjection);
  const models = rt.readModel(modelsProjection);
  const answers = answerCache(rt);

  /**
   * How many pull requests of the factory's repositories (by anyone) merged in the range and in
   * each period, as the factory's team's webhooks told of them: of its configured repositories,
   * else of those its runs' pull requests are in. Counted in the index, no document read.
   */
  async function repoMerges(factory: FactoryDoc, merged: PullRequestDoc[], range: Range) {
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

  api.get(
    '/factory/:factory_uid/metrics',
    { schema: { params: factoryParams, querystring: metricsQuery, response: { 200: metricsResource }, tags } },
    async (req, reply) => {
      const uid = req.params.factory_uid;
      const now = rt.clock.now();
      const range = resolveRange(req.query, now);
      const key = `metrics:${uid}:${range.start_date}:${range.end_date}:${req.query.group_by_period ?? ''}`;
      return answers.send(req, reply, uid, key, metricsResource, async (factory) => {
        const scope = scopeOf(factory, range);
        const [rows, firstSeen, merged] = await Promise.all([
          rowsOfRange(rollups, factory.uid, range),
          factoryPrsBetween(prs, factory.uid, 'first_seen_at', range),
          factoryPrsBetween(prs, factory.uid, 'merged_at', range),
        ]);
        const { repos, total, perPeriod } = await repoMerges(factory, merged, range);
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
      });
    },
  );

  api.get(
    '/factory/:factory_uid/metrics/run-breakdown',
    {
      schema: {
        params: factoryParams,
        querystring: breakdownQuery,
        response: { 200: runBreakdownResource },
        tags,
        description: 'Run counts grouped by a dimension; `Accept: text/csv` answers CSV.',
      },
    },
    async (req, reply) => {
      const uid = req.params.factory_uid;
      const now = rt.clock.now();
      const range = resolveRange(req.query, now);
      const { group_by } = req.query;
      const key = `runs:${uid}:${group_by}:${range.start_date}:${range.end_date}:${req.query.group_by_period ?? ''}`;
      const make = async (factory: FactoryDoc) => {
        const rows = await rowsOfRange(rollups, factory.uid, range);
        const whole = sumCounts(rows, group_by);
        const periods = range.periods ? byPeriod(range, rows, (r) => r.at).map((p) => sumCounts(p, group_by)) : null;
        const labels =
          group_by === 'model'
            ? Object.fromEntries(((await models.get(CATALOGUE_ID))?.models ?? []).map((m) => [m.id, m.display_name]))
            : {};
        const groups = Object.entries(whole.groups)
          .map(([key, total]) => {
            const label = own(labels, key);
            return {
              key,
              ...(label ? { label } : {}),
              total,
              ...(periods ? { series: periods.map((p) => own(p.groups, key) ?? 0) } : {}),
            };
          })
          .sort(byTotalUnknownLast((g) => g.total));
        return {
          ...scopeOf(factory, range),
          group_by,
          total: group_by === 'source' ? whole.root : whole.total,
          root_run_count: whole.root,
          groups,
          ...(periods
            ? {
                period_list: range.periods!.map((p) => p.label),
                series: {
                  total: periods.map((p) => (group_by === 'source' ? p.root : p.total)),
                  root_run_count: periods.map((p) => p.root),
                },
              }
            : {}),
        };
      };
      if (!wantsCsv(req)) return answers.send(req, reply, uid, key, runBreakdownResource, make);
      const body = await answers.get(req, uid, key, make);
      const periodLabels = body.period_list ?? [];
      const header = ['key', 'label', 'total', ...periodLabels];
      return sendCsv(
        reply,
        `run-breakdown-${group_by}`,
        toCsv(
          header,
          body.groups.map((g) => [g.key, g.label ?? g.key, g.total, ...(g.series ?? [])]),
        ),
      );
    },
  );
}
