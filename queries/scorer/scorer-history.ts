/**
 * GET /factory/{factory_uid}/scorers/{scorer_uid}/history, for auditors: the scorer's own stream
 * (created, updated, deleted: by whom and when), also once it is deleted. Its attempts and
 * judgements are not in it.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { limitParam, pageInfoSchema } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { Api } from '../../src/http/api.js';
import { scorerStream } from '../../commands/scorer/events.js';
import { scorerParams } from '../../commands/scorer/public.js';
import { historyEntry, toHistoryEntry } from '../../src/http/history.js';

const ORDER: Sort = [['revision', 'asc']];

const historyQuery = z.object({ limit: limitParam(1000, 500), cursor: z.string().max(1000).optional() }).strict();

/** The scorer's creation, if it was of this factory and of one of the caller's teams. */
async function assertVisible(rt: Runtime, req: FastifyRequest, factoryUid: string, scorerUid: string) {
  const [first] = await rt.events.readStream(scorerStream(scorerUid), { maxCount: 1 });
  const created = first?.type === 'ScorerCreated' ? (first.data as { factory_uid: string; team_uid: string }) : null;
  if (!created || created.factory_uid !== factoryUid || !req.principal!.teams.has(created.team_uid))
    throw new NotFound('scorer', scorerUid);
}

async function history(
  rt: Runtime,
  req: FastifyRequest,
  params: z.infer<typeof scorerParams>,
  q: z.infer<typeof historyQuery>,
) {
  const { factory_uid, scorer_uid } = params;
  await assertVisible(rt, req, factory_uid, scorer_uid);
  const after = decodeCursor(q.cursor, ORDER)?.[0];
  const fromRevision = typeof after === 'number' && Number.isInteger(after) && after >= 0 ? BigInt(after) + 1n : 0n;
  const events = await rt.events.readStream(scorerStream(scorer_uid), { fromRevision, maxCount: q.limit + 1 });
  const shown = events.slice(0, q.limit);
  const last = shown.at(-1);
  return {
    entries: shown.map(toHistoryEntry),
    page_info: pageInfo(ORDER, events.length > q.limit && last ? [Number(last.revision)] : null),
  };
}

export default function scorerHistoryQueries(api: Api, rt: Runtime): void {
  api.get(
    '/factory/:factory_uid/scorers/:scorer_uid/history',
    {
      schema: {
        params: scorerParams,
        querystring: historyQuery,
        response: { 200: z.object({ entries: z.array(historyEntry), page_info: pageInfoSchema }) },
        tags: ['scorers'],
      },
    },
    (req) => history(rt, req, req.params, req.query),
  );
}
