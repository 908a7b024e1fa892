/** The factory as the API answers it, and who may see one. */
import { canReadFactory } from './events.js';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { NotFound } from '../../src/kernel/errors.js';
import type { Collection } from '../../src/readstore/port.js';
import type { FactoryDoc } from '../../projections/factory/factories.js';

export const factoryResource = z.object({
  uid: z.string(),
  team_uid: z.string(),
  name: z.string(),
  alias: z.string().nullable(),
  description: z.string().nullable(),
  repositories: z.array(z.object({ owner: z.string(), repo: z.string() })),
  foreman_agent_uid: z.string().nullable().describe('The newest live FOREMAN agent of the factory'),
  creator: z.object({ uid: z.string() }),
  definition: z
    .object({
      version: z.number().int(),
      state: z.enum(['applying', 'applied']),
      branch_uid: z.string(),
      applied_at: z.string(),
    })
    .nullable()
    .describe('The definition version in force (GET /factory/{factory_uid}/definition); null before the first apply'),
  created_at: z.string(),
  updated_at: z.string(),
});

export const factoryParams = z.object({ factory_uid: z.string().min(1).max(128) });

export const toFactoryResource = (f: FactoryDoc): z.infer<typeof factoryResource> => ({
  uid: f.uid,
  team_uid: f.team_uid,
  name: f.name,
  alias: f.alias,
  description: f.description,
  repositories: f.repositories,
  foreman_agent_uid: f.foreman_uid,
  creator: f.creator,
  definition: f.definition ?? null,
  created_at: f.created_at,
  updated_at: f.updated_at,
});

/** A factory the caller may see: one of its teams'. Any other answers 404, existing or not. */
export async function visibleFactory(
  factories: Collection<FactoryDoc>,
  req: FastifyRequest,
  uid: string,
): Promise<FactoryDoc> {
  const factory = await factories.get(uid);
  if (!factory || !req.principal || !canReadFactory(factory.team_uid, req.principal))
    throw new NotFound('factory', uid);
  return factory;
}
