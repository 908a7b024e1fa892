/**
 * A scorer's results, newest attempt first (GET /factory/{factory_uid}/scorers/{scorer_uid}/results,
 * and the hosted SDK's /factory/scorers/{scorer_uid}/results and .../results/reasons); a run's
 * scores are in run-scores.ts. Outcomes are derived now, against the threshold of this moment.
 * Reasons are opened with the scorer's key only when asked for; a deleted scorer's results are
 * answered by nobody (its key is gone, and its documents are found through it).
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { booleanParam, pageInfoSchema, repeatable, uidParam } from '../../src/http/schemas.js';
import { InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import { keyringFor } from '../../src/keyring.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { Api } from '../../src/http/api.js';
import { scorerKey } from '../../commands/scorer/events.js';
import { scorerParams, scoringResult, toScoringResult } from '../../commands/scorer/public.js';
import { type ScorerDoc, scorersProjection } from '../../projections/scorer/scorers.js';
import {
  resultKey,
  type ScoringResultDoc,
  scoringResultsProjection,
} from '../../projections/scorer/scoring-results.js';

const NEWEST_FIRST: Sort = [
  ['attempted_at', 'desc'],
  ['attempt_id', 'desc'],
];
const MAX_RUN_IDS = 100;

/** `run_id` filter values: trimmed, deduplicated, 1–100 distinct nonblank ones. */
const runIdFilter = repeatable(z.string().max(128)).transform((ids, ctx) => {
  if (ids === undefined) return undefined;
  const distinct = [...new Set(ids.map((id) => id.trim()).filter(Boolean))];
  if (distinct.length === 0 || distinct.length > MAX_RUN_IDS)
    ctx.addIssue({ code: 'custom', message: `give 1-${MAX_RUN_IDS} distinct nonblank run ids` });
  return distinct;
});

const resultsQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).optional(),
    cursor: z.string().max(1000).optional(),
    include_reasons: booleanParam,
    run_id: runIdFilter,
  })
  .strict()
  .superRefine((q, ctx) => {
    if (q.run_id && (q.cursor !== undefined || q.limit !== undefined))
      ctx.addIssue({ code: 'custom', path: ['run_id'], message: 'run_id cannot be combined with cursor or limit' });
  });

const resultsAnswer = z.object({ results: z.array(scoringResult), page_info: pageInfoSchema });

const reasonsAnswer = z.object({
  reasons: z.array(
    z.object({
      run_id: z.string(),
      status: z.enum(['available', 'absent', 'unavailable']),
      reason: z.string().nullable(),
    }),
  ),
});

const tags = ['scorers'];

type ResultsQuery = z.infer<typeof resultsQuery>;

/** What the results queries read, opened once when their routes are registered. */
const reads = (rt: Runtime) => ({
  scorers: rt.readModel(scorersProjection),
  results: rt.readModel(scoringResultsProjection),
  keyring: keyringFor(rt.config),
});
type Reads = ReturnType<typeof reads>;

/** The live score's reason, opened now: absent when the judge gave none, unavailable when it cannot be read. */
function reasonOf(r: Reads, doc: ScoringResultDoc) {
  const sealed = doc.live?.reason_sealed ?? null;
  if (sealed === null) return { reason_status: 'absent' as const, reason: null };
  const reason = r.keyring.open(scorerKey(doc.scorer_uid), sealed);
  return reason === null
    ? { reason_status: 'unavailable' as const, reason: null }
    : { reason_status: 'available' as const, reason };
}

async function visibleScorer(
  r: Reads,
  req: FastifyRequest,
  scorerUid: string,
  factoryUid?: string,
): Promise<ScorerDoc> {
  const doc = await r.scorers.get(scorerUid);
  if (!doc || (factoryUid !== undefined && doc.factory_uid !== factoryUid) || !req.principal!.teams.has(doc.team_uid))
    throw new NotFound('scorer', scorerUid);
  return doc;
}

async function page(r: Reads, scorer: ScorerDoc, q: ResultsQuery) {
  const render = (d: ScoringResultDoc) => ({
    ...toScoringResult(d, scorer.threshold),
    ...(q.include_reasons ? reasonOf(r, d) : {}),
  });
  if (q.run_id) {
    const found = await r.results.getMany(q.run_id.map((run) => resultKey(scorer.uid, run)));
    const docs = [...found.values()].sort(
      (a, b) => b.attempted_at.localeCompare(a.attempted_at) || b.attempt_id.localeCompare(a.attempt_id),
    );
    return { results: docs.map(render), page_info: pageInfo(NEWEST_FIRST, null) };
  }
  const found = await r.results.find({
    filter: { scorer_uid: scorer.uid },
    sort: NEWEST_FIRST,
    limit: q.limit ?? 50,
    after: decodeCursor(q.cursor, NEWEST_FIRST),
  });
  return { results: found.items.map(render), page_info: pageInfo(NEWEST_FIRST, found.next) };
}

/** The hosted SDK's reasons call: one entry per run asked for, even when one cannot be read. */
async function reasons(r: Reads, scorer: ScorerDoc, ids: string[] | undefined) {
  if (!ids) throw new InvalidRequest('give run_id', [{ path: 'querystring.run_id', message: 'required' }]);
  const found = await r.results.getMany(ids.map((run) => resultKey(scorer.uid, run)));
  return {
    reasons: ids.map((run_id) => {
      const doc = found.get(resultKey(scorer.uid, run_id));
      if (!doc) return { run_id, status: 'absent' as const, reason: null };
      const { reason_status, reason } = reasonOf(r, doc);
      return { run_id, status: reason_status, reason };
    }),
  };
}

export default function scorerResultQueries(api: Api, rt: Runtime): void {
  const r = reads(rt);
  const schema = { querystring: resultsQuery, response: { 200: resultsAnswer }, tags };
  api.get(
    '/factory/:factory_uid/scorers/:scorer_uid/results',
    { schema: { ...schema, params: scorerParams } },
    async (req) => page(r, await visibleScorer(r, req, req.params.scorer_uid, req.params.factory_uid), req.query),
  );
  api.get(
    '/factory/scorers/:scorer_uid/results',
    { schema: { ...schema, params: z.object({ scorer_uid: uidParam }) } },
    async (req) => page(r, await visibleScorer(r, req, req.params.scorer_uid), req.query),
  );
  api.get(
    '/factory/scorers/:scorer_uid/results/reasons',
    {
      schema: {
        params: z.object({ scorer_uid: uidParam }),
        querystring: z.object({ run_id: runIdFilter }).strict(),
        response: { 200: reasonsAnswer },
        tags,
      },
    },
    async (req) => reasons(r, await visibleScorer(r, req, req.params.scorer_uid), req.query.run_id),
  );
}
