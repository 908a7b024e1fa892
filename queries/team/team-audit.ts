/**
 * GET /teams/{team_uid}/audit: every grant and revocation of access to the team (see
 * projections/team/access-audit.ts), oldest first, in the entries of the history endpoints (`data` is
 * what was granted or taken away, without hashes). For the team's admins only.
 */
import { z } from 'zod';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { limitParam, pageInfoSchema } from '../../src/http/schemas.js';
import { Forbidden } from '../../src/kernel/errors.js';
import type { Collection, Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { type AuditEntryDoc, accessAuditProjection } from '../../projections/team/access-audit.js';
import { type HistoryEntry, historyEntry } from '../run/history.js';
import { roleIn, teamParams } from './teams.js';
import type { Api } from '../../src/http/api.js';

const query = z.object({ limit: limitParam(1000, 500), cursor: z.string().max(1000).optional() }).strict();

const auditResponse = z.object({ entries: z.array(historyEntry), page_info: pageInfoSchema });

const ORDER: Sort = [['order', 'asc']];

const toAuditEntry = (doc: AuditEntryDoc): HistoryEntry => ({
  id: doc.event_id,
  position: doc.position,
  stream: doc.stream,
  revision: doc.revision,
  type: doc.type,
  occurred_at: doc.occurred_at,
  actor: doc.actor,
  correlation_id: doc.correlation_id,
  causation_id: doc.causation_id,
  request_id: doc.request_id,
  data: doc.data,
});

/** One page of a team's audit entries, after `cursor`. */
export async function teamAudit(
  entries: Collection<AuditEntryDoc>,
  team_uid: string,
  limit: number,
  cursor?: string,
): Promise<z.infer<typeof auditResponse>> {
  const page = await entries.find({ filter: { team_uid }, sort: ORDER, limit, after: decodeCursor(cursor, ORDER) });
  return { entries: page.items.map(toAuditEntry), page_info: pageInfo(ORDER, page.next) };
}

export default function teamAuditQueries(api: Api, rt: Runtime): void {
  const entries = rt.readModel(accessAuditProjection);
  api.get(
    '/teams/:team_uid/audit',
    { schema: { params: teamParams, querystring: query, response: { 200: auditResponse }, tags: ['history'] } },
    async (req) => {
      const { team_uid } = req.params;
      if (roleIn(req, team_uid) !== 'admin') throw new Forbidden("only team admins read the team's audit");
      return teamAudit(entries, team_uid, req.query.limit, req.query.cursor);
    },
  );
}
