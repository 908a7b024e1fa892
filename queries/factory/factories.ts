/** GET /factory and GET /factory/{uid}. */
import { z } from 'zod';
import { activeTeam } from '../../src/http/auth.js';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { limitParam, pageInfoSchema } from '../../src/http/schemas.js';
import { Forbidden } from '../../src/kernel/errors.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { factoriesProjection } from '../../projections/factory/factories.js';
import { factoryParams, factoryResource, toFactoryResource, visibleFactory } from '../../commands/factory/public.js';
import type { Api } from '../../src/http/api.js';

const listQuery = z
  .object({
    team_uid: z.string().min(1).max(128).optional(),
    search: z.string().max(200).optional(),
    limit: limitParam(),
    cursor: z.string().max(1000).optional(),
  })
  .strict();

const SORT: Sort = [
  ['name', 'asc'],
  ['id', 'asc'],
];

export default function factoryQueries(api: Api, rt: Runtime): void {
  const factories = rt.readModel(factoriesProjection);
  const tags = ['factories'];

  const listResponse = z.object({ factories: z.array(factoryResource), page_info: pageInfoSchema });
  api.get('/factory', { schema: { querystring: listQuery, response: { 200: listResponse }, tags } }, async (req) => {
    const { team_uid, search, limit, cursor } = req.query;
    if (team_uid !== undefined && !req.principal!.teams.has(team_uid))
      throw new Forbidden(`not a member of team ${team_uid}`);
    const team = team_uid ?? activeTeam(req).uid;
    const page = await factories.find({
      filter: {
        team_uid: team,
        ...(search ? { $or: [{ name: { $contains: search } }, { alias: { $contains: search } }] } : {}),
      },
      sort: SORT,
      limit,
      after: decodeCursor(cursor, SORT),
      maxScan: rt.config.LIST_MAX_SCAN,
    });
    return { factories: page.items.map(toFactoryResource), page_info: pageInfo(SORT, page.next) };
  });

  api.get(
    '/factory/:factory_uid',
    { schema: { params: factoryParams, response: { 200: factoryResource }, tags } },
    async (req) => toFactoryResource(await visibleFactory(factories, req, req.params.factory_uid)),
  );
}
