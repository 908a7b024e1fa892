/** GET /factory/{factory_uid}/definition (the version in force) and …/definition/versions (its history, newest first). */
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { limitParam, pageInfoSchema, uidParam } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { factoriesProjection, visibleFactory } from '../../commands/factory/public.js';
import { factoryDefinitionsProjection } from '../../projections/branch/factory-definitions.js';
import {
  definitionResource,
  definitionVersion,
  toDefinitionResource,
  toDefinitionVersion,
} from '../../commands/branch/public.js';

const params = z.object({ factory_uid: uidParam });
const listQuery = z.object({ limit: limitParam(), cursor: z.string().max(1000).optional() }).strict();
const SORT: Sort = [
  ['version', 'desc'],
  ['id', 'desc'],
];

export default function definitionQueries(api: Api, rt: Runtime): void {
  const tags = ['factory definition'];
  const factories = rt.readModel(factoriesProjection);
  const definitions = rt.readModel(factoryDefinitionsProjection);
  const versions = rt.readTable(factoryDefinitionsProjection, 'versions');

  api.get(
    '/factory/:factory_uid/definition',
    {
      schema: {
        params,
        response: { 200: definitionResource },
        tags,
        description:
          'The definition in force: its version, files, the resources it manages and its runners; 404 before the first apply',
      },
    },
    async (req) => {
      const factory = await visibleFactory(factories, req, req.params.factory_uid);
      const definition = await definitions.get(factory.uid);
      if (!definition) throw new NotFound('definition of factory', factory.uid);
      return toDefinitionResource(definition);
    },
  );

  const listResponse = z.object({ versions: z.array(definitionVersion), page_info: pageInfoSchema });
  api.get(
    '/factory/:factory_uid/definition/versions',
    { schema: { params, querystring: listQuery, response: { 200: listResponse }, tags } },
    async (req) => {
      const factory = await visibleFactory(factories, req, req.params.factory_uid);
      const page = await versions.find({
        filter: { factory_uid: factory.uid },
        sort: SORT,
        limit: req.query.limit,
        after: decodeCursor(req.query.cursor, SORT),
      });
      return { versions: page.items.map(toDefinitionVersion), page_info: pageInfo(SORT, page.next) };
    },
  );
}
