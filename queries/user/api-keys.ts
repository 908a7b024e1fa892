/**
 * GET /me/api-keys (the caller's own) and GET /agent/identities/{agent_uid}/api-keys (an agent's,
 * for the users who manage it). Never a key nor its hash: its id, label, last four characters,
 * creation, creator and expiry.
 */
import type { z } from 'zod';
import { Forbidden, NotFound } from '../../src/kernel/errors.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { apiKeysProjection } from '../../projections/user/api-keys.js';
import { identitiesProjection, identityParams } from '../../commands/identity/public.js';
import { apiKeyList, toApiKeyResource } from '../../commands/user/public.js';
import type { Api } from '../../src/http/api.js';

const ORDER: Sort = [
  ['created_at', 'asc'],
  ['key_id', 'asc'],
];

/** A principal has at most 100 live keys (commands/user/keys.ts): one page holds them all. */
async function keysOf(rt: Runtime, principal_uid: string): Promise<z.infer<typeof apiKeyList>> {
  const page = await rt.readModel(apiKeysProjection).find({ filter: { principal_uid }, sort: ORDER, limit: 1000 });
  return { api_keys: page.items.map(toApiKeyResource) };
}

export function userKeyQueries(api: Api, rt: Runtime): void {
  api.get('/me/api-keys', { schema: { response: { 200: apiKeyList }, tags: ['api-keys'] } }, async (req) => {
    if (req.principal!.type !== 'user') throw new Forbidden('only users have API keys of their own');
    return keysOf(rt, req.principal!.uid);
  });
}

export function agentKeyQueries(api: Api, rt: Runtime): void {
  const identities = rt.readModel(identitiesProjection);
  api.get(
    '/agent/identities/:agent_uid/api-keys',
    { schema: { params: identityParams, response: { 200: apiKeyList }, tags: ['agents'] } },
    async (req) => {
      const { agent_uid } = req.params;
      const agent = await identities.get(agent_uid);
      // As the agent's other management routes: people of its team only.
      if (!agent || !req.principal!.teams.has(agent.team_uid)) throw new NotFound('agent identity', agent_uid);
      if (req.principal!.type !== 'user') throw new Forbidden('only users can manage agent identities');
      return keysOf(rt, agent_uid);
    },
  );
}
