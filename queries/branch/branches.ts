/** GET /factory/{factory_uid}/branches/{branch_uid} (the spec's branch status) and GET /factory/{factory_uid}/branches (extension). */
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { limitParam, pageInfoSchema, uidParam } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { branchesProjection } from '../../projections/branch/branches.js';
import { factoriesProjection, visibleFactory } from '../../commands/factory/public.js';
import {
  assertBranchesEnabled,
  branchParams,
  branchStatus,
  branchStatusOf,
  visibleBranch,
} from '../../commands/branch/public.js';

const listQuery = z
  .object({
    name: z.string().min(1).max(100).optional().describe('Exactly this name'),
    limit: limitParam(),
    cursor: z.string().max(1000).optional(),
  })
  .strict();

const SORT: Sort = [
  ['name', 'asc'],
  ['id', 'asc'],
];

export default function branchQueries(api: Api, rt: Runtime): void {
  const tags = ['factory branches'];
  const branches = rt.readModel(branchesProjection);
  const factories = rt.readModel(factoriesProjection);

  // Reading a branch changes nothing: no tracking, no repair, no read model write.
  api.get(
    '/factory/:factory_uid/branches/:branch_uid',
    { schema: { params: branchParams, response: { 200: branchStatus }, tags } },
    async (req) => {
      assertBranchesEnabled(rt.config);
      const { factory_uid, branch_uid } = req.params;
      await visibleFactory(factories, req, factory_uid);
      const branch = await visibleBranch(rt, req.principal!.teams, factory_uid, branch_uid);
      if (!branch) throw new NotFound('branch', branch_uid);
      return branchStatusOf(rt, branch);
    },
  );

  const listResponse = z.object({ branches: z.array(branchStatus), page_info: pageInfoSchema });
  api.get(
    '/factory/:factory_uid/branches',
    {
      schema: {
        params: z.object({ factory_uid: uidParam }),
        querystring: listQuery,
        response: { 200: listResponse },
        tags,
        description: 'The live branches of the factory, by name',
      },
    },
    async (req) => {
      assertBranchesEnabled(rt.config);
      const factory = await visibleFactory(factories, req, req.params.factory_uid);
      const { name, limit, cursor } = req.query;
      const page = await branches.find({
        filter: { factory_uid: factory.uid, status: 'OPEN', ...(name ? { name } : {}) },
        sort: SORT,
        limit,
        after: decodeCursor(cursor, SORT),
      });
      const items = [];
      for (const b of page.items) items.push(await branchStatusOf(rt, b));
      return { branches: items, page_info: pageInfo(SORT, page.next) };
    },
  );
}
