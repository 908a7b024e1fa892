/**
 * GET /factory/{factory_uid}/costs/breakdown (summed from the factory's rollups), and the per-PR
 * costs: /costs/per-pr, /costs/per-pr/top and /costs/per-pr/by-size (from the pull-request read
 * model: each pull request's share of the trees that produced it, over the PRs first seen in the
 * range).
 */
import { z } from 'zod';
import type { Usd } from '../../commands/analytics/events.js';
import {
  COST_GROUPS,
  costBreakdownResource,
  costBySizeResource,
  costPerPrResource,
  type Dollars,
  PR_SIZES,
  toPullRequestRecord,
  topPrResource,
} from '../../commands/analytics/public.js';
import { factoryParams, type FactoryDoc } from '../../commands/factory/public.js';
import type { Api } from '../../src/http/api.js';
import { limitParam } from '../../src/http/schemas.js';
import type { Runtime } from '../../src/runtime.js';
import { factoryRollupsProjection, type RollupDoc, UNKNOWN_KEY } from '../../projections/analytics/factory-rollups.js';
import { identitiesProjection } from '../../commands/identity/public.js';
import { CATALOGUE_ID, modelsProjection } from '../../commands/model/public.js';
import { type PullRequestDoc, pullRequestsProjection } from '../../projections/analytics/pull-requests.js';
import { teamMembersProjection } from '../../commands/team/public.js';
import { usersProjection } from '../../commands/user/public.js';
import { addUsd, answerCache, dollarsOf, scopeOf, sendCsv, toCsv, wantsCsv } from './analytics-answers.js';
import { median, periodParam, rangeParams, resolveRange, rowsOfRange } from './analytics-range.js';
import { byPeriod, byTotalUnknownLast, factoryPrsBetween } from './metrics.js';
import { own, putOwn } from '../../src/own-keys.js';

const breakdownQuery = z.object({ group_by: z.enum(COST_GROUPS), ...rangeParams, ...periodParam }).strict();
const perPrQuery = z.object({ ...rangeParams, ...periodParam }).strict();
const topQuery = z.object({ limit: limitParam(50, 20), ...rangeParams }).strict();

const zero = (): Usd => ({ inference: 0, compute: 0, platform: 0 });
const totalOf = (u: Usd) => u.inference + u.compute + u.platform;
const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

type Group = (typeof COST_GROUPS)[number];

function sumCosts(rows: readonly RollupDoc[], groupBy: Group) {
  let total = zero();
  const groups: Record<string, Usd> = {};
  for (const row of rows) {
    total = addUsd(total, row.cost.total);
    for (const [k, usd] of Object.entries(row.cost[groupBy])) putOwn(groups, k, addUsd(own(groups, k) ?? zero(), usd));
  }
  return { total, groups };
}

/** The mean and median cost of some pull requests. */
function perPr(list: readonly PullRequestDoc[]) {
  const sum = list.reduce<Usd>((s, pr) => addUsd(s, pr.cost), zero());
  const n = list.length;
  return {
    pr_count: n,
    dollars: dollarsOf(sum),
    mean: n ? dollarsOf({ inference: sum.inference / n, compute: sum.compute / n, platform: sum.platform / n }) : null,
    median: median(list.map((pr) => pr.cost.total)),
  };
}

export default function costQueries(api: Api, rt: Runtime): void {
  const tags = ['costs'];
  const rollups = rt.readModel(factoryRollupsProjection);
  const prs = rt.readModel(pullRequestsProjection);
  const users = rt.readModel(usersProjection);
  const members = rt.readModel(teamMembersProjection);
  const identities = rt.readModel(identitiesProjection);
  const models = rt.readModel(modelsProjection);
  const answers = answerCache(rt);

  /** How each key of a grouping reads: its label, whether it was removed, a photo. */
  async function labelsOf(groupBy: Group, keys: string[], factory: FactoryDoc) {
    const out = new Map<string, { label: string; deleted: boolean; photo_url: string | null }>();
    const plain = (key: string) => ({ label: key, deleted: false, photo_url: null });
    if (groupBy === 'source') for (const k of keys) out.set(k, plain(k));
    if (groupBy === 'model') {
      const catalogue = (await models.get(CATALOGUE_ID))?.models ?? [];
      for (const k of keys) out.set(k, { ...plain(k), label: catalogue.find((m) => m.id === k)?.display_name ?? k });
    }
    if (groupBy === 'agent' || groupBy === 'user') {
      const ids = keys.filter((k) => k !== UNKNOWN_KEY);
      const [people, agents, memberships] = await Promise.all([
        groupBy === 'user' ? users.getMany(ids) : Promise.resolve(new Map()),
        identities.getMany(ids),
        groupBy === 'user' ? members.getMany(ids.map((u) => `${factory.team_uid}:${u}`)) : Promise.resolve(new Map()),
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
    }
    return out;
  }

  api.get(
    '/factory/:factory_uid/costs/breakdown',
    {
      schema: {
        params: factoryParams,
        querystring: breakdownQuery,
        response: { 200: costBreakdownResource },
        tags,
        description: 'Spend by source, user, agent or model; `Accept: text/csv` answers CSV.',
      },
    },
    async (req, reply) => {
      const uid = req.params.factory_uid;
      const now = rt.clock.now();
      const range = resolveRange(req.query, now);
      const { group_by } = req.query;
      const key = `costs:${uid}:${group_by}:${range.start_date}:${range.end_date}:${req.query.group_by_period ?? ''}`;
      const make = async (factory: FactoryDoc) => {
        const rows = await rowsOfRange(rollups, factory.uid, range);
        const whole = sumCosts(rows, group_by);
        const periods = range.periods ? byPeriod(range, rows, (r) => r.at).map((p) => sumCosts(p, group_by)) : null;
        const keys = Object.keys(whole.groups).filter((k) => Math.abs(totalOf(own(whole.groups, k)!)) >= 5e-7);
        const labels = await labelsOf(group_by, keys, factory);
        const groups = keys
          .map((k) => ({
            key: k,
            ...labels.get(k)!,
            dollars: dollarsOf(own(whole.groups, k)!),
            ...(periods ? { series: periods.map((p) => dollarsOf(own(p.groups, k) ?? zero())) } : {}),
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
      };
      if (!wantsCsv(req)) return answers.send(req, reply, uid, key, costBreakdownResource, make);
      const body = await answers.get(req, uid, key, make);
      const periodLabels = body.period_list ?? [];
      return sendCsv(
        reply,
        `costs-by-${group_by}`,
        toCsv(
          ['key', 'label', 'deleted', 'inference', 'compute', 'platform', 'total', ...periodLabels],
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
        ),
      );
    },
  );

  api.get(
    '/factory/:factory_uid/costs/per-pr',
    { schema: { params: factoryParams, querystring: perPrQuery, response: { 200: costPerPrResource }, tags } },
    async (req, reply) => {
      const uid = req.params.factory_uid;
      const now = rt.clock.now();
      const range = resolveRange(req.query, now);
      const key = `per-pr:${uid}:${range.start_date}:${range.end_date}:${req.query.group_by_period ?? ''}`;
      return answers.send(req, reply, uid, key, costPerPrResource, async (factory) => {
        const seen = await factoryPrsBetween(prs, factory.uid, 'first_seen_at', range);
        const whole = { ...scopeOf(factory, range), ...perPr(seen) };
        if (!range.periods) return whole;
        const periods = byPeriod(range, seen, (pr) => pr.first_seen_at).map(perPr);
        return {
          ...whole,
          period_list: range.periods.map((p) => p.label),
          series: {
            pr_count: periods.map((p) => p.pr_count),
            dollars: periods.map((p) => p.dollars),
            mean: periods.map((p) => p.mean?.total ?? null),
            inference_mean: periods.map((p) => p.mean?.inference ?? null),
            compute_mean: periods.map((p) => p.mean?.compute ?? null),
            platform_mean: periods.map((p) => p.mean?.platform ?? null),
            median: periods.map((p) => p.median),
          },
        };
      });
    },
  );

  api.get(
    '/factory/:factory_uid/costs/per-pr/by-size',
    { schema: { params: factoryParams, querystring: perPrQuery, response: { 200: costBySizeResource }, tags } },
    async (req, reply) => {
      const uid = req.params.factory_uid;
      const now = rt.clock.now();
      const range = resolveRange(req.query, now);
      const key = `by-size:${uid}:${range.start_date}:${range.end_date}:${req.query.group_by_period ?? ''}`;
      return answers.send(req, reply, uid, key, costBySizeResource, async (factory) => {
        const seen = await factoryPrsBetween(prs, factory.uid, 'first_seen_at', range);
        const buckets = (list: readonly PullRequestDoc[]) =>
          PR_SIZES.map((size) => {
            const of = perPr(list.filter((pr) => pr.size === size));
            return { size, pr_count: of.pr_count, mean: of.mean, median: of.median };
          });
        const whole = {
          ...scopeOf(factory, range),
          pr_count: seen.length,
          sized_pr_count: seen.filter((pr) => pr.size !== null).length,
          buckets: buckets(seen),
        };
        if (!range.periods) return whole;
        const periods = byPeriod(range, seen, (pr) => pr.first_seen_at).map(buckets);
        const of = (size: (typeof PR_SIZES)[number]) => {
          const at = periods.map((p) => p.find((b) => b.size === size)!);
          return {
            pr_count: at.map((b) => b.pr_count),
            mean: at.map((b) => b.mean?.total ?? null),
            median: at.map((b) => b.median),
          };
        };
        return {
          ...whole,
          period_list: range.periods.map((p) => p.label),
          series: { S: of('S'), M: of('M'), L: of('L'), XL: of('XL') },
        };
      });
    },
  );

  api.get(
    '/factory/:factory_uid/costs/per-pr/top',
    {
      schema: {
        params: factoryParams,
        querystring: topQuery,
        response: { 200: topPrResource },
        tags,
        description: 'The costliest pull requests first seen in the range; `Accept: text/csv` answers CSV.',
      },
    },
    async (req, reply) => {
      const uid = req.params.factory_uid;
      const now = rt.clock.now();
      const range = resolveRange(req.query, now);
      const { limit } = req.query;
      const key = `top:${uid}:${limit}:${range.start_date}:${range.end_date}`;
      const make = async (factory: FactoryDoc) => {
        const seen = await factoryPrsBetween(prs, factory.uid, 'first_seen_at', range);
        const data = seen
          .sort(
            (a, b) =>
              b.cost.total - a.cost.total ||
              (a.first_seen_at ?? '').localeCompare(b.first_seen_at ?? '') ||
              a.pr_id.localeCompare(b.pr_id),
          )
          .slice(0, limit)
          .map((pr) => {
            const inference = Object.values(pr.models).reduce((s, usd) => s + usd, 0);
            return {
              ...toPullRequestRecord(pr),
              dollars: dollarsOf(pr.cost),
              models: Object.entries(pr.models)
                .map(([model_id, usd]) => ({ model_id, share: inference > 0 ? round6(usd / inference) : 0 }))
                .sort((a, b) => b.share - a.share || a.model_id.localeCompare(b.model_id)),
              creator: pr.kickoff?.creator ?? null,
              source: pr.kickoff?.source ?? null,
              requested_model_id: pr.kickoff?.requested_model_id ?? null,
            };
          });
        return { ...scopeOf(factory, range), data };
      };
      if (!wantsCsv(req)) return answers.send(req, reply, uid, key, topPrResource, make);
      const { data } = await answers.get(req, uid, key, make);
      return sendCsv(
        reply,
        'costliest-pull-requests',
        toCsv(
          [
            'url',
            'repo_full_name',
            'pr_number',
            'title',
            'state',
            'first_seen_at',
            'inference',
            'compute',
            'platform',
            'total',
            'creator',
            'source',
            'requested_model_id',
            'models',
          ],
          data.map((pr) => [
            pr.url,
            pr.repo_full_name,
            pr.pr_number,
            pr.title,
            pr.state,
            pr.first_seen_at,
            pr.dollars.inference,
            pr.dollars.compute,
            pr.dollars.platform,
            pr.dollars.total,
            pr.creator?.uid,
            pr.source,
            pr.requested_model_id,
            pr.models.map((m) => `${m.model_id} ${Math.round(m.share * 100)}%`).join('; '),
          ]),
        ),
      );
    },
  );
}
