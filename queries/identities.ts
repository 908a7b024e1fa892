/** GET /agent/identities (optionally by factory) and GET /agent/identities/{uid}. */
import { z } from 'zod';
import { activeTeam } from '../src/http/auth.js';
import { NotFound } from '../src/kernel/errors.js';
import type { Runtime } from '../src/runtime.js';
import { identitiesProjection } from '../projections/identities.js';
import { toIdentityResource } from '../commands/identity/resource.js';
import type { Api } from '../src/http/api.js';

/** At most this many agents per list; teams have a handful. */
const LIST_LIMIT = 500;

export default function identityQueries(api: Api, rt: Runtime): void {
  const identities = rt.readModel(identitiesProjection);

  api.get(
    '/agent/identities',
    { schema: { querystring: z.object({ factory_uid: z.string().min(1).optional() }).strict(), tags: ['agents'] } },
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
    '/agent/identities/:uid',
    { schema: { params: z.object({ uid: z.string().min(1) }), tags: ['agents'] } },
    async (req) => {
      const doc = await identities.get(req.params.uid);
      if (!doc || !req.principal!.teams.has(doc.team_uid)) throw new NotFound('agent identity', req.params.uid);
      return toIdentityResource(doc);
    },
  );
}
