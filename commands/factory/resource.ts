/** The factory as the API answers it, and who may see one. */
import type { FastifyRequest } from 'fastify';
import { NotFound } from '../../src/kernel/errors.js';
import type { Collection } from '../../src/readstore/port.js';
import type { FactoryDoc } from '../../projections/factories.js';

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
export async function visibleFactory(
  factories: Collection<FactoryDoc>,
  req: FastifyRequest,
  uid: string,
): Promise<FactoryDoc> {
  const factory = await factories.get(uid);
  if (!factory || !req.principal?.teams.has(factory.team_uid)) throw new NotFound('factory', uid);
  return factory;
}
