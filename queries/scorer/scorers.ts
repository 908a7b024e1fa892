/**
 * GET /factory/{factory_uid}/scorers (and the hosted SDK's GET /factory/scorers?factory_uid=),
 * and GET /factory/{factory_uid}/scorers/{scorer_uid} (its history for auditors: scorer-history.ts).
 *
 * A list entry carries its counts from the scorer's total rollup and its pass-rate summary from
 * its most recent live scores (at most `recent_outcomes_limit` rows of an index), each judged
 * pass or fail now, against the threshold of this moment.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { booleanParam, dateTimeParam, limitParam, uidParam } from '../../src/http/schemas.js';
import { InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { Api } from '../../src/http/api.js';
import {
  outcomeOf,
  scorerListItem,
  scorerParams,
  scorerResource,
  toScorerResource,
} from '../../commands/scorer/public.js';
import { factoriesProjection } from '../../commands/factory/public.js';
import { identitiesProjection } from '../../commands/identity/public.js';
import { type ScorerDoc, scorersProjection } from '../../projections/scorer/scorers.js';
import { scoringResultsProjection } from '../../projections/scorer/scoring-results.js';
import { rollupKey, scoringRollupsProjection } from '../../projections/scorer/scoring-rollups.js';

const BY_CREATION: Sort = [
  ['created_at', 'asc'],
  ['id', 'asc'],
];

const listQuery = z
  .object({
    start_date: dateTimeParam.optional(),
    end_date: dateTimeParam.optional(),
    recent_outcomes_limit: limitParam(100, 50),
    include_managed: booleanParam,
  })
  .strict()
  .superRefine((q, ctx) => {
    if ((q.start_date === undefined) !== (q.end_date === undefined))
      ctx.addIssue({ code: 'custom', path: ['start_date'], message: 'give start_date and end_date together' });
    else if (q.start_date && q.end_date && Date.parse(q.start_date) >= Date.parse(q.end_date))
      ctx.addIssue({ code: 'custom', path: ['start_date'], message: 'start_date must be before end_date' });
  });

const listAnswer = z.object({ scorers: z.array(scorerListItem) });

const tags = ['scorers'];

type ListQuery = z.infer<typeof listQuery>;

/** The read models the scorer queries read, opened once when their routes are registered. */
const reads = (rt: Runtime) => ({
  scorers: rt.readModel(scorersProjection),
  factories: rt.readModel(factoriesProjection),
  identities: rt.readModel(identitiesProjection),
  results: rt.readModel(scoringResultsProjection),
  rollups: rt.readModel(scoringRollupsProjection),
});
type Reads = ReturnType<typeof reads>;

async function agentNames(r: Reads, docs: readonly ScorerDoc[]) {
  const ids = [...new Set(docs.flatMap((d) => d.agents.map((a) => a.uid)))];
  const found = await r.identities.getMany(ids);
  return new Map([...found].map(([uid, a]) => [uid, a.name]));
}

/** The factory, if the caller may see it (one of its teams'). */
async function visibleFactory(r: Reads, req: FastifyRequest, uid: string) {
  const factory = await r.factories.get(uid);
  if (!factory || !req.principal!.teams.has(factory.team_uid)) throw new NotFound('factory', uid);
  return factory;
}

/** The pass-rate summary of the scorer's most recent live scores, judged against its threshold now. */
async function passRateSummary(r: Reads, doc: ScorerDoc, recent: number) {
  const latest = await r.results.find({
    filter: { scorer_uid: doc.uid, live_scored_at: { $ne: null } },
    sort: [
      ['live_scored_at', 'desc'],
      ['id', 'desc'],
    ],
    limit: recent,
  });
  const outcomes = latest.items.reverse().map((r) => outcomeOf(r.live_score!, doc.threshold));
  const pass_count = outcomes.filter((o) => o === 'pass').length;
  return {
    pass_count,
    fail_count: outcomes.length - pass_count,
    pass_rate: outcomes.length ? pass_count / outcomes.length : null,
    recent_outcomes: outcomes,
  };
}

async function listEntry(r: Reads, doc: ScorerDoc, names: Map<string, string>, recent: number) {
  const [total, pass_rate_summary] = await Promise.all([
    r.rollups.get(rollupKey(doc.uid, 'all', '')),
    passRateSummary(r, doc, recent),
  ]);
  return {
    ...toScorerResource(doc, names),
    result_count: (total?.scores ?? []).reduce((n, s) => n + s.count, 0),
    last_scored_at: total?.last_scored_at ?? null,
    pass_rate_summary,
  };
}

async function list(r: Reads, req: FastifyRequest, filter: Record<string, string>, q: ListQuery) {
  const docs = await findAll(r.scorers, { filter, sort: BY_CREATION, limit: 200 });
  // Benchmark-managed scorers (the built-in correctness scorer) only when asked for.
  const visible = docs.filter(
    (d) => req.principal!.teams.has(d.team_uid) && (q.include_managed || (d.scorer_kind ?? 'user') === 'user'),
  );
  const names = await agentNames(r, visible);
  return { scorers: await Promise.all(visible.map((d) => listEntry(r, d, names, q.recent_outcomes_limit))) };
}

/** The hosted SDK's form: every scorer of the active team, or of one factory. */
async function listOfTeam(r: Reads, req: FastifyRequest, q: ListQuery & { factory_uid?: string }) {
  if (q.factory_uid) {
    const factory = await visibleFactory(r, req, q.factory_uid);
    return list(r, req, { factory_uid: factory.uid }, q);
  }
  if (!req.team) throw new InvalidRequest('the caller belongs to no team');
  return list(r, req, { team_uid: req.team.uid }, q);
}

/** The scorer, if it is live, of this factory, and of one of the caller's teams. */
async function visibleScorer(r: Reads, req: FastifyRequest, factoryUid: string, scorerUid: string) {
  const doc = await r.scorers.get(scorerUid);
  if (!doc || doc.factory_uid !== factoryUid || !req.principal!.teams.has(doc.team_uid))
    throw new NotFound('scorer', scorerUid);
  return doc;
}

export default function scorerQueries(api: Api, rt: Runtime): void {
  const r = reads(rt);
  api.get(
    '/factory/:factory_uid/scorers',
    {
      schema: {
        params: z.object({ factory_uid: uidParam }),
        querystring: listQuery,
        response: { 200: listAnswer },
        tags,
      },
    },
    async (req) => {
      const factory = await visibleFactory(r, req, req.params.factory_uid);
      return list(r, req, { factory_uid: factory.uid }, req.query);
    },
  );
  api.get(
    '/factory/scorers',
    {
      schema: {
        querystring: listQuery.safeExtend({ factory_uid: uidParam.optional() }),
        response: { 200: listAnswer },
        tags,
      },
    },
    (req) => listOfTeam(r, req, req.query),
  );
  api.get(
    '/factory/:factory_uid/scorers/:scorer_uid',
    { schema: { params: scorerParams, response: { 200: scorerResource }, tags } },
    async (req) => {
      const doc = await visibleScorer(r, req, req.params.factory_uid, req.params.scorer_uid);
      return toScorerResource(doc, await agentNames(r, [doc]));
    },
  );
}
