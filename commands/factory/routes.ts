/** POST /factory, PATCH /factory/{uid}, DELETE /factory/{uid}. */
import { timeOrderedId } from '../../src/ids.js';
import { z } from 'zod';
import { activeTeam } from '../../src/http/auth.js';
import { commandContext } from '../../src/http/context.js';
import { noContent } from '../../src/http/schemas.js';
import type { Runtime } from '../../src/runtime.js';
import { factoriesProjection } from '../../projections/factory/factories.js';
import { factoryDecider } from './factory-decider.js';
import { factoryStream } from './events.js';
import { factoryParams, factoryResource, toFactoryResource } from './resource.js';
import type { Api } from '../../src/http/api.js';

const repository = z
  .object({
    owner: z.string().trim().min(1).max(100),
    repo: z.string().trim().min(1).max(100),
  })
  .strict();

const fields = {
  name: z.string().trim().min(1).max(200),
  alias: z.string().trim().min(1).max(100).nullable(),
  description: z.string().max(2000).nullable(),
  repositories: z.array(repository).max(100),
};

const createBody = z
  .object({
    name: fields.name,
    alias: fields.alias.optional(),
    description: fields.description.optional(),
    repositories: fields.repositories.optional(),
  })
  .strict();

const patchBody = z
  .object({
    name: fields.name.optional(),
    alias: fields.alias.optional(),
    description: fields.description.optional(),
    repositories: fields.repositories.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one field to change' });

export default function factoryRoutes(api: Api, rt: Runtime): void {
  const factories = rt.readModel(factoriesProjection);
  const current = async (uid: string) => toFactoryResource((await factories.get(uid))!);

  const tags = ['factories'];
  api.post(
    '/factory',
    { schema: { body: createBody, response: { 201: factoryResource }, tags }, config: { idempotent: true } },
    async (req, reply) => {
      const uid = timeOrderedId();
      const { name, alias = null, description = null, repositories = [] } = req.body;
      await rt.execute(
        factoryStream(uid),
        factoryDecider,
        {
          type: 'CreateFactory',
          data: { uid, team_uid: activeTeam(req).uid, name, alias, description, repositories },
        },
        commandContext(req),
      );
      return reply.code(201).send(await current(uid));
    },
  );

  const patchSchema = { params: factoryParams, body: patchBody, response: { 200: factoryResource }, tags };
  api.patch('/factory/:factory_uid', { schema: patchSchema }, async (req) => {
    const { factory_uid: uid } = req.params;
    await rt.execute(
      factoryStream(uid),
      factoryDecider,
      { type: 'UpdateFactory', data: { uid, changes: req.body } },
      commandContext(req),
    );
    return current(uid);
  });

  const deleteSchema = { params: factoryParams, response: { 204: noContent() }, tags };
  api.delete('/factory/:factory_uid', { schema: deleteSchema }, async (req, reply) => {
    const { factory_uid: uid } = req.params;
    await rt.execute(factoryStream(uid), factoryDecider, { type: 'DeleteFactory', data: { uid } }, commandContext(req));
    return reply.code(204).send(null);
  });
}
