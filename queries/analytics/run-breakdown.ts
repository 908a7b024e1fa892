/**
 * GET /factory/{factory_uid}/metrics/run-breakdown: run counts summed from the factory's rollups,
 * grouped by a dimension (a series per period when asked for); `Accept: text/csv` answers CSV.
 */
import { z } from 'zod';
import { factoryParams, type FactoryDoc } from '../../commands/factory/public.js';
import { RUN_GROUPS, runBreakdownResource } from '../../commands/analytics/public.js';
import type { Api } from '../../src/http/api.js';
import type { Runtime } from '../../src/runtime.js';
import {
  factoryRollupsProjection,
  type RollupDoc,
  type RunCounts,
} from '../../projections/analytics/factory-rollups.js';
import { CATALOGUE_ID, modelsProjection } from '../../commands/model/public.js';
import { type AnswerCache, byTotalUnknownLast, scopeOf, sendCsv, toCsv, wantsCsv } from './analytics-answers.js';
import { periodParam, type Range, rangeParams, resolveRange, rowsOfRange } from './analytics-range.js';
import { own, putOwn } from '../../src/own-keys.js';

type RunGroup = (typeof RUN_GROUPS)[number];

const breakdownQuery = z.object({ group_by: z.enum(RUN_GROUPS), ...rangeParams, ...periodParam }).strict();

/** The keys of one run-breakdown group in a run contribution. */
function groupCounts(runs: RunCounts, groupBy: RunGroup): Record<string, number> {
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

const sumCounts = (rows: readonly RollupDoc[], groupBy: RunGroup) => {
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

/** The models' display names, when grouping by model. */
const labelsOf = async (rt: Runtime, groupBy: RunGroup): Promise<Record<string, string>> =>
  groupBy === 'model'
    ? Object.fromEntries(
        ((await rt.readModel(modelsProjection).get(CATALOGUE_ID))?.models ?? []).map((m) => [m.id, m.display_name]),
      )
    : {};

async function breakdownOf(rt: Runtime, factory: FactoryDoc, range: Range, group_by: RunGroup) {
  const rows = await rowsOfRange(rt.readModel(factoryRollupsProjection), factory.uid, range);
  const whole = sumCounts(rows.whole, group_by);
  const periods = rows.periods?.map((p) => sumCounts(p, group_by)) ?? null;
  const labels = await labelsOf(rt, group_by);
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
}

/** Registered by metricsQueries (./metrics.ts), whose answer cache it shares. */
export function runBreakdownRoute(api: Api, rt: Runtime, answers: AnswerCache): void {
  api.get(
    '/factory/:factory_uid/metrics/run-breakdown',
    {
      schema: {
        params: factoryParams,
        querystring: breakdownQuery,
        response: { 200: runBreakdownResource },
        tags: ['metrics'],
        description: 'Run counts grouped by a dimension; `Accept: text/csv` answers CSV.',
      },
    },
    async (req, reply) => {
      const uid = req.params.factory_uid;
      const range = resolveRange(req.query, rt.clock.now());
      const { group_by } = req.query;
      const key = `runs:${uid}:${group_by}:${range.start_date}:${range.end_date}:${req.query.group_by_period ?? ''}`;
      const make = (factory: FactoryDoc) => breakdownOf(rt, factory, range, group_by);
      if (!wantsCsv(req)) return answers.send(req, reply, uid, key, runBreakdownResource, make);
      const body = await answers.get(req, uid, key, make);
      const header = ['key', 'label', 'total', ...(body.period_list ?? [])];
      const rows = body.groups.map((g) => [g.key, g.label ?? g.key, g.total, ...(g.series ?? [])]);
      return sendCsv(reply, `run-breakdown-${group_by}`, toCsv(header, rows));
    },
  );
}
