/**
 * POST /agent/identities, PUT and DELETE /agent/identities/{agent_uid}, POST .../api-keys and
 * DELETE .../api-keys/{key_id} (GET .../api-keys is in queries/user/api-keys.ts).
 */
import { timeOrderedId } from '../../src/ids.js';
import { activeTeam } from '../../src/http/auth.js';
import { commandContext } from '../../src/http/context.js';
import { noContent } from '../../src/http/schemas.js';
import type { Runtime } from '../../src/runtime.js';
import { identitiesProjection } from '../../projections/identity/identities.js';
import { factoryDecider } from '../factory/public.js';
import { type FactoryState, factoryStream } from '../factory/events.js';
import { apiKeyBody, issuedKeyAnswer, newKeyGrant, issuedApiKey, keyIdParam } from '../user/public.js';
import { identityDecider } from './identity-decider.js';
import { type AgentProfile, identityStream } from './events.js';
import { createIdentityBody, updateIdentityBody } from './schema.js';
import { identityParams, identityResource, toIdentityResource } from './resource.js';
import type { Api } from '../../src/http/api.js';

/** A body's fields as stored: null (unchanged) and omitted fields dropped, an empty string made null (cleared). */
type Stored<T> = { [K in keyof T]?: Exclude<T[K], '' | null | undefined> | ('' extends T[K] ? null : never) };

/** Drops null (unchanged) fields; an empty string clears the field. */
const withoutNulls = <T extends object>(body: T) =>
  Object.fromEntries(
    Object.entries(body)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, v === '' ? null : v]),
  ) as Stored<T>;

export default function identityRoutes(api: Api, rt: Runtime): void {
  const identities = rt.readModel(identitiesProjection);
  const current = async (uid: string) => toIdentityResource((await identities.get(uid))!);
  const factoryState = async (uid: unknown): Promise<FactoryState | null> =>
    typeof uid === 'string' ? await rt.state(factoryDecider, factoryStream(uid)) : null;

  const tags = ['agents'];
  const createSchema = { body: createIdentityBody, response: { 201: identityResource }, tags };
  api.post('/agent/identities', { schema: createSchema, config: { idempotent: true } }, async (req, reply) => {
    const uid = timeOrderedId();
    const profile: AgentProfile = { ...withoutNulls(req.body), name: req.body.name, agent_type: req.body.agent_type };
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

  const updateSchema = { params: identityParams, body: updateIdentityBody, response: { 200: identityResource }, tags };
  api.put('/agent/identities/:agent_uid', { schema: updateSchema }, async (req) => {
    const { agent_uid: uid } = req.params;
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

  const deleteSchema = { params: identityParams, response: { 204: noContent() }, tags };
  api.delete('/agent/identities/:agent_uid', { schema: deleteSchema }, async (req, reply) => {
    const { agent_uid: uid } = req.params;
    await rt.execute(
      identityStream(uid),
      identityDecider,
      { type: 'DeleteIdentity', data: { uid } },
      commandContext(req),
    );
    return reply.code(204).send(null);
  });

  // The same body and answer as a user's own keys (POST /me/api-keys): the key is shown once.
  const keySchema = { params: identityParams, body: apiKeyBody, response: { 201: issuedApiKey }, tags };
  api.post(
    '/agent/identities/:agent_uid/api-keys',
    { schema: keySchema, config: { idempotent: true } },
    async (req, reply) => {
      const { agent_uid: uid } = req.params;
      const { key, grant } = newKeyGrant(req.body);
      await rt.execute(
        identityStream(uid),
        identityDecider,
        { type: 'IssueAgentApiKey', data: { uid, key: grant } },
        commandContext(req),
      );
      return reply.code(201).send(await issuedKeyAnswer(rt, key));
    },
  );

  const revokeSchema = {
    params: identityParams.extend({ key_id: keyIdParam }),
    response: { 204: noContent() },
    tags,
  };
  api.delete('/agent/identities/:agent_uid/api-keys/:key_id', { schema: revokeSchema }, async (req, reply) => {
    const { agent_uid: uid, key_id } = req.params;
    await rt.execute(
      identityStream(uid),
      identityDecider,
      { type: 'RevokeAgentApiKey', data: { uid, key_id } },
      commandContext(req),
    );
    return reply.code(204).send(null);
  });
}
