/** POST /agent/identities, PUT and DELETE /agent/identities/{uid}, POST .../api-keys. */
import { timeOrderedId } from '../../src/ids.js';
import { z } from 'zod';
import { activeTeam } from '../../src/http/auth.js';
import { commandContext } from '../../src/http/context.js';
import type { Runtime } from '../../src/runtime.js';
import { identitiesProjection } from '../../projections/identities.js';
import { factoryDecider, type FactoryState } from '../factory/decider.js';
import { factoryStream } from '../factory/events.js';
import { newApiKey } from '../../src/http/api-key.js';
import { identityDecider } from './decider.js';
import { type AgentProfile, identityStream } from './events.js';
import { createIdentityBody, updateIdentityBody } from './schema.js';
import { toIdentityResource } from './resource.js';
import type { Api } from '../../src/http/api.js';

const params = z.object({ uid: z.string().min(1) });

/** Drops null (unchanged) fields; an empty string clears the field. */
const withoutNulls = (body: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(body)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, v === '' ? null : v]),
  );

export default function identityRoutes(api: Api, rt: Runtime): void {
  const identities = rt.readModel(identitiesProjection);
  const current = async (uid: string) => toIdentityResource((await identities.get(uid))!);
  const factoryState = async (uid: unknown): Promise<FactoryState | null> =>
    typeof uid === 'string' ? await rt.state(factoryDecider, factoryStream(uid)) : null;

  api.post('/agent/identities', { schema: { body: createIdentityBody, tags: ['agents'] } }, async (req, reply) => {
    const uid = timeOrderedId();
    const profile = withoutNulls(req.body) as AgentProfile;
    await rt.execute(
      identityStream(uid),
      identityDecider,
      {
        type: 'CreateIdentity',
        data: { uid, team_uid: activeTeam(req).uid, profile, factory: await factoryState(profile.factory_uid) },
      },
      commandContext(req),
    );
    return reply.code(201).send(await current(uid));
  });

  api.put('/agent/identities/:uid', { schema: { params, body: updateIdentityBody, tags: ['agents'] } }, async (req) => {
    const { uid } = req.params;
    const changes = withoutNulls(req.body) as Partial<AgentProfile>;
    await rt.execute(
      identityStream(uid),
      identityDecider,
      {
        type: 'UpdateIdentity',
        data: { uid, changes, factory: await factoryState(changes.factory_uid) },
      },
      commandContext(req),
    );
    return current(uid);
  });

  api.delete('/agent/identities/:uid', { schema: { params, tags: ['agents'] } }, async (req, reply) => {
    await rt.execute(
      identityStream(req.params.uid),
      identityDecider,
      { type: 'DeleteIdentity', data: { uid: req.params.uid } },
      commandContext(req),
    );
    return reply.code(204).send();
  });

  api.post('/agent/identities/:uid/api-keys', { schema: { params, tags: ['agents'] } }, async (req, reply) => {
    const key = newApiKey();
    const key_id = timeOrderedId();
    await rt.execute(
      identityStream(req.params.uid),
      identityDecider,
      {
        type: 'IssueAgentApiKey',
        data: { uid: req.params.uid, key_id, key_hash: key.hash },
      },
      commandContext(req),
    );
    return reply.code(201).send({ key_id, api_key: key.key });
  });
}
