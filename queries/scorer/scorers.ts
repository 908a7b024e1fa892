/**
 * GET /factory/{factory_uid}/scorers (and the hosted SDK's GET /factory/scorers?factory_uid=),
 * GET /factory/{factory_uid}/scorers/{scorer_uid}, and its history for auditors.
 *
 * A list entry carries its counts from the scorer's total rollup and its pass-rate summary from
 * its most recent live scores (at most `recent_outcomes_limit` rows of an index), each judged
 * pass or fail now, against the threshold of this moment.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { booleanParam, dateTimeParam, limitParam, pageInfoSchema, uidParam } from '../../src/http/schemas.js';
import { InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { Api } from '../../src/http/api.js';
import { scorerStream } from '../../commands/scorer/events.js';
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
import { historyEntry, toHistoryEntry } from '../../src/http/history.js';

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

export default function scorerQueries(api: Api, rt: Runtime): void {
  const tags = ['scorers'];
  const scorers = rt.readModel(scorersProjection);
  const factories = rt.readModel(factoriesProjection);
  const identities = rt.readModel(identitiesProjection);
  const results = rt.readModel(scoringResultsProjection);
  const rollups = rt.readModel(scoringRollupsProjection);

  const agentNames = async (docs: readonly ScorerDoc[]) => {
    const found = await identities.getMany([...new Set(docs.flatMap((d) => d.agents.map((a) => a.uid)))]);
    return new Map([...found].map(([uid, a]) => [uid, a.name]));
  };

  /** The factory, if the caller may see it (one of its teams'). */
  async function visibleFactory(req: FastifyRequest, uid: string) {
    const factory = await factories.get(uid);
    if (!factory || !req.principal!.teams.has(factory.team_uid)) throw new NotFound('factory', uid);
    return factory;
  }

  async function listEntry(doc: ScorerDoc, names: Map<string, string>, recent: number) {
    const [total, latest] = await Promise.all([
      rollups.get(rollupKey(doc.uid, 'all', '')),
      results.find({
        filter: { scorer_uid: doc.uid, live_scored_at: { $ne: null } },
        sort: [
          ['live_scored_at', 'desc'],
          ['id', 'desc'],
        ],
        limit: recent,
      }),
    ]);
    const outcomes = latest.items.reverse().map((r) => outcomeOf(r.live_score!, doc.threshold));
    const pass_count = outcomes.filter((o) => o === 'pass').length;
    const fail_count = outcomes.length - pass_count;
    return {
      ...toScorerResource(doc, names),
      result_count: (total?.scores ?? []).reduce((n, s) => n + s.count, 0),
      last_scored_at: total?.last_scored_at ?? null,
      pass_rate_summary: {
        pass_count,
        fail_count,
        pass_rate: outcomes.length ? pass_count / outcomes.length : null,
        recent_outcomes: outcomes,
      },
    };
  }

  async function list(req: FastifyRequest, filter: Record<string, string>, recent: number, managed: boolean) {
    const docs = await findAll(scorers, {
      filter,
      sort: BY_CREATION,
      limit: 200,
    });
    // Benchmark-managed scorers (the built-in correctness scorer) only when asked for.
    const visible = docs.filter(
      (d) => req.principal!.teams.has(d.team_uid) && (managed || (d.scorer_kind ?? 'user') === 'user'),
    );
    const names = await agentNames(visible);
    return { scorers: await Promise.all(visible.map((d) => listEntry(d, names, recent))) };
  }

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
      const factory = await visibleFactory(req, req.params.factory_uid);
      return list(req, { factory_uid: factory.uid }, req.query.recent_outcomes_limit, req.query.include_managed);
    },
  );

  // The hosted SDK's form: every scorer of the active team, or of one factory.
  api.get(
    '/factory/scorers',
    {
      schema: {
        querystring: listQuery.safeExtend({ factory_uid: uidParam.optional() }),
        response: { 200: listAnswer },
        tags,
      },
    },
    async (req) => {
      if (req.query.factory_uid) {
        const factory = await visibleFactory(req, req.query.factory_uid);
        return list(req, { factory_uid: factory.uid }, req.query.recent_outcomes_limit, req.query.include_managed);
      }
      if (!req.team) throw new InvalidRequest('the caller belongs to no team');
      return list(req, { team_uid: req.team.uid }, req.query.recent_outcomes_limit, req.query.include_managed);
    },
  );

  /** The scorer, if it is live, of this factory, and of one of the caller's teams. */
  async function visibleScorer(req: FastifyRequest, factoryUid: string, scorerUid: string) {
    const doc = await scorers.get(scorerUid);
    if (!doc || doc.factory_uid !== factoryUid || !req.principal!.teams.has(doc.team_uid))
      throw new NotFound('scorer', scorerUid);
    return doc;
  }

  api.get(
    '/factory/:factory_uid/scorers/:scorer_uid',
    { schema: { params: scorerParams, response: { 200: scorerResource }, tags } },
    async (req) => {
      const doc = await visibleScorer(req, req.params.factory_uid, req.params.scorer_uid);
      return toScorerResource(doc, await agentNames([doc]));
    },
  );

  // For auditors: the scorer's own stream (created, updated, deleted: by whom and when), also
  // once it is deleted. Its attempts and judgements are not in it.
  const ORDER: Sort = [['revision', 'asc']];
  api.get(
    '/factory/:factory_uid/scorers/:scorer_uid/history',
    {
      schema: {
        params: scorerParams,
        querystring: z.object({ limit: limitParam(1000, 500), cursor: z.string().max(1000).optional() }).strict(),
        response: { 200: z.object({ entries: z.array(historyEntry), page_info: pageInfoSchema }) },
        tags,
      },
    },
    async (req) => {
      const { factory_uid, scorer_uid } = req.params;
      const [first] = await rt.events.readStream(scorerStream(scorer_uid), { maxCount: 1 });
      const created =
        first?.type === 'ScorerCreated' ? (first.data as { factory_uid: string; team_uid: string }) : null;
      if (!created || created.factory_uid !== factory_uid || !req.principal!.teams.has(created.team_uid))
        throw new NotFound('scorer', scorer_uid);
      const after = decodeCursor(req.query.cursor, ORDER)?.[0];
      const fromRevision = typeof after === 'number' && Number.isInteger(after) && after >= 0 ? BigInt(after) + 1n : 0n;
      const events = await rt.events.readStream(scorerStream(scorer_uid), {
        fromRevision,
        maxCount: req.query.limit + 1,
      });
      const shown = events.slice(0, req.query.limit);
      const last = shown.at(-1);
      return {
        entries: shown.map(toHistoryEntry),
        page_info: pageInfo(ORDER, events.length > req.query.limit && last ? [Number(last.revision)] : null),
      };
    },
  );
}
