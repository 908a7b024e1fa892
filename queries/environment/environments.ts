/** GET /agent/environments (the caller's teams' environments) and GET /agent/environments/{id}. */
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { NotFound } from '../../src/kernel/errors.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { environmentParams, environmentResource } from '../../commands/environment/public.js';
import { environmentAnswers } from '../../projections/environment/environment-answers.js';
import { environmentsProjection } from '../../projections/environment/environments.js';

const SORTS: Record<'name' | 'last_updated', Sort> = {
  name: [
    ['name_key', 'asc'],
    ['id', 'asc'],
  ],
  last_updated: [
    ['last_updated', 'desc'],
    ['id', 'desc'],
  ],
};

/** A team has at most this many environments listed; teams have a handful. */
const LIST_LIMIT = 1000;

const listQuery = z.object({ sort_by: z.enum(['name', 'last_updated']).default('last_updated') }).strict();

export default function environmentQueries(api: Api, rt: Runtime): void {
  const tags = ['environments'];
  const environments = rt.readModel(environmentsProjection);
  const answers = environmentAnswers(rt);

  api.get(
    '/agent/environments',
    {
      schema: {
        querystring: listQuery,
        response: { 200: z.object({ environments: z.array(environmentResource) }) },
        tags,
      },
    },
    async (req) => {
      const sort = SORTS[req.query.sort_by];
      const teams = [...req.principal!.teams.keys()];
      const docs = await findAll(environments, { filter: { team_uid: { $in: teams } }, sort, limit: 500 });
      return { environments: await answers.many(docs.slice(0, LIST_LIMIT)) };
    },
  );

  api.get(
    '/agent/environments/:environment_id',
    { schema: { params: environmentParams, response: { 200: environmentResource }, tags } },
    async (req) => {
      const doc = await environments.get(req.params.environment_id);
      if (!doc || !req.principal!.teams.has(doc.team_uid)) throw new NotFound('environment', req.params.environment_id);
      return (await answers.many([doc]))[0]!;
    },
  );
}
