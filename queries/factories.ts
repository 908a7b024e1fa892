/** GET /factory and GET /factory/{uid}. */
import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../src/http/app.js';
import { activeTeam } from '../src/http/auth.js';
import { decodeCursor, pageInfo } from '../src/http/cursor.js';
import { limitParam } from '../src/http/schemas.js';
import { Forbidden, NotFound } from '../src/kernel/errors.js';
import type { Collection, Sort } from '../src/readstore/port.js';
import type { Runtime } from '../src/runtime.js';
import { factoriesProjection, type FactoryDoc } from '../projections/factories.js';

export const toFactoryResource = (f: FactoryDoc) => ({
  uid: f.uid,
  team_uid: f.team_uid,
  name: f.name,
  alias: f.alias,
  description: f.description,
  repositories: f.repositories,
  foreman_agent_uid: f.foreman_uid,
  creator: f.creator,
  created_at: f.created_at,
  updated_at: f.updated_at,
});

/** A factory the caller may see: one of its teams'. Any other answers 404, existing or not. */
export async function visibleFactory(factories: Collection<FactoryDoc>, req: FastifyRequest, uid: string): Promise<FactoryDoc> {
  const factory = await factories.get(uid);
  if (!factory || !req.principal?.teams.has(factory.team_uid)) throw new NotFound('factory', uid);
  return factory;
}

const listQuery = z
  .object({
    team_uid: z.string().min(1).optional(),
    search: z.string().max(200).optional(),
    limit: limitParam(),
    cursor: z.string().max(1000).optional(),
  })
  .strict();

const SORT: Sort = [['name', 'asc'], ['id', 'asc']];

export default function factoryQueries(api: Api, rt: Runtime): void {
  const factories = rt.readModel<FactoryDoc>(factoriesProjection);

  api.get('/factory', { schema: { querystring: listQuery, tags: ['factories'] } }, async (req) => {
    const { team_uid, search, limit, cursor } = req.query;
    if (team_uid !== undefined && !req.principal!.teams.has(team_uid)) throw new Forbidden(`not a member of team ${team_uid}`);
    const team = team_uid ?? activeTeam(req).uid;
    const page = await factories.find({
      filter: {
        team_uid: team,
        ...(search ? { $or: [{ name: { $contains: search } }, { alias: { $contains: search } }] } : {}),
      },
      sort: SORT,
      limit,
      after: decodeCursor(cursor, SORT),
    });
    return { factories: page.items.map(toFactoryResource), page_info: pageInfo(SORT, page.next) };
  });

  api.get('/factory/:uid', { schema: { params: z.object({ uid: z.string().min(1) }), tags: ['factories'] } }, async (req) =>
    toFactoryResource(await visibleFactory(factories, req, req.params.uid)),
  );
}
