/** GET /agent/identities (optionally by factory) and GET /agent/identities/{agent_uid}. */
import { z } from 'zod';
import { activeTeam } from '../../src/http/auth.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { identitiesProjection } from '../../projections/identity/identities.js';
import { identityParams, identityResource, toIdentityResource } from '../../commands/identity/public.js';
import type { Api } from '../../src/http/api.js';

/** At most this many agents per list; teams have a handful. */
const LIST_LIMIT = 500;

const listQuery = z.object({ factory_uid: z.string().min(1).max(128).optional() }).strict();
const listResponse = z.object({
  agents: z
    .array(identityResource)
    .describe(`The team's agents (of one factory, if asked), oldest first; at most ${LIST_LIMIT}`),
});

export default function identityQueries(api: Api, rt: Runtime): void {
  const identities = rt.readModel(identitiesProjection);
  const tags = ['agents'];

  api.get(
    '/agent/identities',
    { schema: { querystring: listQuery, response: { 200: listResponse }, tags } },
    async (req) => {
      const page = await identities.find({
        filter: { team_uid: activeTeam(req).uid, factory_uid: req.query.factory_uid },
        sort: [
          ['created_at', 'asc'],
          ['id', 'asc'],
        ],
        limit: LIST_LIMIT,
      });
      return { agents: page.items.map(toIdentityResource) };
    },
  );

  api.get(
    '/agent/identities/:agent_uid',
    { schema: { params: identityParams, response: { 200: identityResource }, tags } },
    async (req) => {
      const { agent_uid } = req.params;
      const doc = await identities.get(agent_uid);
      if (!doc || !req.principal!.teams.has(doc.team_uid)) throw new NotFound('agent identity', agent_uid);
      return toIdentityResource(doc);
    },
  );
}
