/**
 * The per-PR costs: GET /factory/{factory_uid}/costs/per-pr, /costs/per-pr/by-size and
 * /costs/per-pr/top: each pull request's share of the trees that produced it, over the PRs first
 * seen in the range, from the pull-request buckets that tile it (the costliest: the first of each
 * bucket's own costliest, then their documents). Registered by costQueries (./costs.ts),
 * whose cache of answers they share.
 */
import { z } from 'zod';
import {
  costBySizeResource,
  costPerPrResource,
  PR_SIZES,
  toPullRequestRecord,
  topPrResource,
} from '../../commands/analytics/public.js';
import { factoryParams, type FactoryDoc } from '../../commands/factory/public.js';
import type { Api } from '../../src/http/api.js';
import { limitParam } from '../../src/http/schemas.js';
import type { Runtime } from '../../src/runtime.js';
import { type PullRequestDoc, pullRequestsProjection } from '../../projections/analytics/pull-requests.js';
import type { PrBucket } from '../../projections/analytics/pr-buckets.js';
import { byCost } from '../../projections/analytics/pr-costliest.js';
import { type AnswerCache, dollarsOf, scopeOf, sendCsv, toCsv, wantsCsv } from './analytics-answers.js';
import { periodParam, type Range, rangeParams, resolveRange, rowsOfRange } from './analytics-range.js';
import { costPerPr, ofSize, sumSeen } from './pr-figures.js';

const perPrQuery = z.object({ ...rangeParams, ...periodParam }).strict();
const topQuery = z.object({ limit: limitParam(50, 20), ...rangeParams }).strict();

const tags = ['costs'];

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

/** The pull-request buckets of the factory that tile the range (and each period). */
const bucketsOf = (rt: Runtime, factory: FactoryDoc, range: Range) =>
  rowsOfRange(rt.readTable(pullRequestsProjection, 'buckets'), factory.uid, range);

async function perPrOf(rt: Runtime, factory: FactoryDoc, range: Range) {
  const rows = await bucketsOf(rt, factory, range);
  const whole = { ...scopeOf(factory, range), ...costPerPr(rows.whole.map((r) => r.seen)) };
  if (!rows.periods) return whole;
  const periods = rows.periods.map((p) => costPerPr(p.map((r) => r.seen)));
  return {
    ...whole,
    period_list: range.periods!.map((p) => p.label),
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
}

/** The mean and median cost of each size of pull request. */
const sizeBuckets = (rows: readonly PrBucket[]) =>
  PR_SIZES.map((size) => {
    const of = costPerPr(ofSize(rows, size));
    return { size, pr_count: of.pr_count, mean: of.mean, median: of.median };
  });

async function bySizeOf(rt: Runtime, factory: FactoryDoc, range: Range) {
  const rows = await bucketsOf(rt, factory, range);
  const buckets = sizeBuckets(rows.whole);
  const whole = {
    ...scopeOf(factory, range),
    pr_count: sumSeen(rows.whole).count,
    sized_pr_count: buckets.reduce((s, b) => s + b.pr_count, 0),
    buckets,
  };
  if (!rows.periods) return whole;
  const periods = rows.periods.map(sizeBuckets);
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
    period_list: range.periods!.map((p) => p.label),
    series: { S: of('S'), M: of('M'), L: of('L'), XL: of('XL') },
  };
}

/** A costly pull request: its record, its cost, the share of each model in its inference, its kickoff. */
function topEntry(pr: PullRequestDoc) {
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
}

/** The costliest first seen in the range: the first of each row's own costliest (each holds at least `limit`). */
async function topOf(rt: Runtime, factory: FactoryDoc, range: Range, limit: number) {
  const rows = await rowsOfRange(rt.readTable(pullRequestsProjection, 'costliest'), factory.uid, range);
  const costliest = rows.whole
    .flatMap((r) => r.top)
    .sort(byCost)
    .slice(0, limit);
  const docs = await rt.readModel(pullRequestsProjection).getMany(costliest.map((e) => e.key));
  const data = costliest.map((e) => docs.get(e.key)).filter((pr): pr is PullRequestDoc => pr !== undefined);
  return { ...scopeOf(factory, range), data: data.map(topEntry) };
}

const TOP_CSV_HEADER = [
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
];

const topCsv = (data: ReturnType<typeof topEntry>[]) =>
  toCsv(
    TOP_CSV_HEADER,
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
  );

function topRoute(api: Api, rt: Runtime, answers: AnswerCache): void {
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
      const range = resolveRange(req.query, rt.clock.now());
      const { limit } = req.query;
      const key = `top:${uid}:${limit}:${range.start_date}:${range.end_date}`;
      const make = (factory: FactoryDoc) => topOf(rt, factory, range, limit);
      if (!wantsCsv(req)) return answers.send(req, reply, uid, key, topPrResource, make);
      const { data } = await answers.get(req, uid, key, make);
      return sendCsv(reply, 'costliest-pull-requests', topCsv(data));
    },
  );
}

export function prCostRoutes(api: Api, rt: Runtime, answers: AnswerCache): void {
  api.get(
    '/factory/:factory_uid/costs/per-pr',
    { schema: { params: factoryParams, querystring: perPrQuery, response: { 200: costPerPrResource }, tags } },
    async (req, reply) => {
      const uid = req.params.factory_uid;
      const range = resolveRange(req.query, rt.clock.now());
      const key = `per-pr:${uid}:${range.start_date}:${range.end_date}:${req.query.group_by_period ?? ''}`;
      return answers.send(req, reply, uid, key, costPerPrResource, (factory) => perPrOf(rt, factory, range));
    },
  );
  api.get(
    '/factory/:factory_uid/costs/per-pr/by-size',
    { schema: { params: factoryParams, querystring: perPrQuery, response: { 200: costBySizeResource }, tags } },
    async (req, reply) => {
      const uid = req.params.factory_uid;
      const range = resolveRange(req.query, rt.clock.now());
      const key = `by-size:${uid}:${range.start_date}:${range.end_date}:${req.query.group_by_period ?? ''}`;
      return answers.send(req, reply, uid, key, costBySizeResource, (factory) => bySizeOf(rt, factory, range));
    },
  );
  topRoute(api, rt, answers);
}
