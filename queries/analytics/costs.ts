/**
 * GET /factory/{factory_uid}/costs/breakdown: spend by source, user, agent or model, summed from
 * the factory's rollups; and, sharing its cache of answers, the per-PR costs of ./pr-costs.ts.
 */
import { z } from 'zod';
import type { Usd } from '../../commands/analytics/events.js';
import { COST_GROUPS, costBreakdownResource, type Dollars } from '../../commands/analytics/public.js';
import { factoryParams, type FactoryDoc } from '../../commands/factory/public.js';
import type { Api } from '../../src/http/api.js';
import type { Runtime } from '../../src/runtime.js';
import { factoryRollupsProjection, type RollupDoc, UNKNOWN_KEY } from '../../projections/analytics/factory-rollups.js';
import { identitiesProjection } from '../../commands/identity/public.js';
import { CATALOGUE_ID, modelsProjection } from '../../commands/model/public.js';
import { teamMembersProjection } from '../../commands/team/public.js';
import { usersProjection } from '../../commands/user/public.js';
import {
  type AnswerCache,
  addUsd,
  answerCache,
  byTotalUnknownLast,
  dollarsOf,
  noUsd,
  scopeOf,
  sendCsv,
  toCsv,
  wantsCsv,
} from './analytics-answers.js';
import { periodParam, type Range, rangeParams, resolveRange, rowsOfRange } from './analytics-range.js';
import { prCostRoutes } from './pr-costs.js';
import { own, putOwn } from '../../src/own-keys.js';

const breakdownQuery = z.object({ group_by: z.enum(COST_GROUPS), ...rangeParams, ...periodParam }).strict();

const totalOf = (u: Usd) => u.inference + u.compute + u.platform;

type Group = (typeof COST_GROUPS)[number];
type Label = { label: string; deleted: boolean; photo_url: string | null };

function sumCosts(rows: readonly RollupDoc[], groupBy: Group) {
  let total = noUsd();
  const groups: Record<string, Usd> = {};
  for (const row of rows) {
    total = addUsd(total, row.cost.total);
    for (const [k, usd] of Object.entries(row.cost[groupBy])) putOwn(groups, k, addUsd(own(groups, k) ?? noUsd(), usd));
  }
  return { total, groups };
}

const plain = (key: string): Label => ({ label: key, deleted: false, photo_url: null });

/** People by name (removed when no longer of the team), agents by name; a key naming none as itself. */
async function labelsOfPrincipals(rt: Runtime, groupBy: 'agent' | 'user', keys: string[], factory: FactoryDoc) {
  const out = new Map<string, Label>();
  const ids = keys.filter((k) => k !== UNKNOWN_KEY);
  const [people, agents, memberships] = await Promise.all([
    groupBy === 'user' ? rt.readModel(usersProjection).getMany(ids) : Promise.resolve(new Map()),
    rt.readModel(identitiesProjection).getMany(ids),
    groupBy === 'user'
      ? rt.readModel(teamMembersProjection).getMany(ids.map((u) => `${factory.team_uid}:${u}`))
      : Promise.resolve(new Map()),
  ]);
  for (const k of keys) {
    const person = people.get(k);
    const agent = agents.get(k);
    if (person)
      out.set(k, {
        label: person.display_name,
        deleted: !memberships.has(`${factory.team_uid}:${k}`),
        photo_url: null,
      });
    else if (agent) out.set(k, { label: agent.name, deleted: false, photo_url: null });
    // An agent's documents go with it: a key naming none is an agent since deleted (or the system).
    else out.set(k, { label: k, deleted: k !== UNKNOWN_KEY && groupBy === 'agent', photo_url: null });
  }
  return out;
}

/** How each key of a grouping reads: its label, whether it was removed, a photo. */
async function labelsOf(rt: Runtime, groupBy: Group, keys: string[], factory: FactoryDoc) {
  if (groupBy === 'agent' || groupBy === 'user') return labelsOfPrincipals(rt, groupBy, keys, factory);
  const out = new Map<string, Label>();
  if (groupBy === 'source') for (const k of keys) out.set(k, plain(k));
  if (groupBy === 'model') {
    const catalogue = (await rt.readModel(modelsProjection).get(CATALOGUE_ID))?.models ?? [];
    for (const k of keys) out.set(k, { ...plain(k), label: catalogue.find((m) => m.id === k)?.display_name ?? k });
  }
  return out;
}

async function breakdownOf(rt: Runtime, factory: FactoryDoc, range: Range, group_by: Group) {
  const rows = await rowsOfRange(rt.readModel(factoryRollupsProjection), factory.uid, range);
  const whole = sumCosts(rows.whole, group_by);
  const periods = rows.periods?.map((p) => sumCosts(p, group_by)) ?? null;
  const keys = Object.keys(whole.groups).filter((k) => Math.abs(totalOf(own(whole.groups, k)!)) >= 5e-7);
  const labels = await labelsOf(rt, group_by, keys, factory);
  const groups = keys
    .map((k) => ({
      key: k,
      ...labels.get(k)!,
      dollars: dollarsOf(own(whole.groups, k)!),
      ...(periods ? { series: periods.map((p) => dollarsOf(own(p.groups, k) ?? noUsd())) } : {}),
    }))
    .sort(byTotalUnknownLast((g) => g.dollars.total));
  return {
    ...scopeOf(factory, range),
    group_by,
    total: dollarsOf(whole.total),
    groups,
    ...(periods
      ? {
          period_list: range.periods!.map((p) => p.label),
          series: { total: periods.map((p) => dollarsOf(p.total)) },
        }
      : {}),
  };
}

type Breakdown = Awaited<ReturnType<typeof breakdownOf>>;

const breakdownCsv = (body: Breakdown) =>
  toCsv(
    ['key', 'label', 'deleted', 'inference', 'compute', 'platform', 'total', ...(body.period_list ?? [])],
    body.groups.map((g) => [
      g.key,
      g.label,
      g.deleted,
      g.dollars.inference,
      g.dollars.compute,
      g.dollars.platform,
      g.dollars.total,
      ...(g.series ?? []).map((d: Dollars) => d.total),
    ]),
  );

function costBreakdownRoute(api: Api, rt: Runtime, answers: AnswerCache): void {
  api.get(
    '/factory/:factory_uid/costs/breakdown',
    {
      schema: {
        params: factoryParams,
        querystring: breakdownQuery,
        response: { 200: costBreakdownResource },
        tags: ['costs'],
        description: 'Spend by source, user, agent or model; `Accept: text/csv` answers CSV.',
      },
    },
    async (req, reply) => {
      const uid = req.params.factory_uid;
      const range = resolveRange(req.query, rt.clock.now());
      const { group_by } = req.query;
      const key = `costs:${uid}:${group_by}:${range.start_date}:${range.end_date}:${req.query.group_by_period ?? ''}`;
      const make = (factory: FactoryDoc) => breakdownOf(rt, factory, range, group_by);
      if (!wantsCsv(req)) return answers.send(req, reply, uid, key, costBreakdownResource, make);
      return sendCsv(reply, `costs-by-${group_by}`, breakdownCsv(await answers.get(req, uid, key, make)));
    },
  );
}

/** The cost breakdown and the per-PR costs, sharing one cache of answers. */
export default function costQueries(api: Api, rt: Runtime): void {
  const answers = answerCache(rt);
  costBreakdownRoute(api, rt, answers);
  prCostRoutes(api, rt, answers);
}
