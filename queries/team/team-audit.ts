/**
 * GET /teams/{team_uid}/audit: every grant and revocation of access to the team (see
 * projections/team/access-audit.ts), oldest first, in the entries of the history endpoints (`data` is
 * what was granted or taken away, without hashes). For the team's admins only.
 */
import { z } from 'zod';
import { limitParam, pageInfoSchema } from '../../src/http/schemas.js';
import { Forbidden } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { accessAuditProjection, teamAudit } from '../../projections/team/access-audit.js';
import { historyEntry } from '../../src/http/history.js';
import { roleIn, teamParams } from './teams.js';
import type { Api } from '../../src/http/api.js';

const query = z.object({ limit: limitParam(1000, 500), cursor: z.string().max(1000).optional() }).strict();

const auditResponse = z.object({ entries: z.array(historyEntry), page_info: pageInfoSchema });

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
