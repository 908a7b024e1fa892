/**
 * A user's own API keys: POST /me/api-keys (shown once) and DELETE /me/api-keys/{key_id}
 * (GET /me/api-keys is in queries/user/api-keys.ts). Agents' keys are managed under
 * /agent/identities/{agent_uid}/api-keys with the same body and answers.
 */
import { z } from 'zod';
import { type IssuedKey, newApiKey } from '../../src/http/api-key.js';
import type { Api } from '../../src/http/api.js';
import { commandContext } from '../../src/http/context.js';
import { noContent } from '../../src/http/schemas.js';
import { timeOrderedId } from '../../src/ids.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { Forbidden } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { apiKeysProjection } from '../../projections/user/api-keys.js';
import { userDecider } from './user-decider.js';
import type { KeyGrant } from './events.js';
import { userStream } from './events.js';
import { issuedApiKey, keyIdParam, toApiKeyResource } from './resource.js';

/** Both optional, so a POST without a body still makes a key (as it always did for agents). */
export const apiKeyBody = z
  .object({
    label: z.string().trim().min(1).max(100).optional(),
    expires_at: z.iso
      .datetime({ offset: true })
      .max(40)
      .optional()
      .describe('When the key stops working (ISO 8601, in the future); omitted: never'),
  })
  .strict()
  .nullish();

/** A new key and what the log keeps of it (never the key). */
export function newKeyGrant(body: z.infer<typeof apiKeyBody>): { key: IssuedKey; grant: KeyGrant } {
  const key = newApiKey();
  return {
    key,
    grant: {
      key_id: timeOrderedId(),
      key_hash: key.hash,
      label: body?.label ?? null,
      last4: key.key.slice(-4),
      expires_at: body?.expires_at ? new Date(body.expires_at).toISOString() : null,
    },
  };
}

/** The created key as answered, read back from the read model the command waited for. */
export async function issuedKeyAnswer(rt: Runtime, key: IssuedKey): Promise<z.infer<typeof issuedApiKey>> {
  const doc = (await rt.readModel(apiKeysProjection).get(key.hash))!;
  return { ...toApiKeyResource(doc), api_key: key.key };
}

function ownUser(context: CommandContext): string {
  if (context.actor.type !== 'user')
    throw new Forbidden("only users have API keys of their own; an agent's are managed under /agent/identities");
  return context.actor.uid;
}

export default function userKeyRoutes(api: Api, rt: Runtime): void {
  const tags = ['api-keys'];

  api.post(
    '/me/api-keys',
    { schema: { body: apiKeyBody, response: { 201: issuedApiKey }, tags }, config: { idempotent: true } },
    async (req, reply) => {
      const context = commandContext(req);
      const uid = ownUser(context);
      const { key, grant } = newKeyGrant(req.body);
      await rt.execute(userStream(uid), userDecider, { type: 'IssueUserApiKey', data: { uid, key: grant } }, context);
      return reply.code(201).send(await issuedKeyAnswer(rt, key));
    },
  );

  api.delete(
    '/me/api-keys/:key_id',
    { schema: { params: z.object({ key_id: keyIdParam }), response: { 204: noContent() }, tags } },
    async (req, reply) => {
      const context = commandContext(req);
      const uid = ownUser(context);
      await rt.execute(
        userStream(uid),
        userDecider,
        { type: 'RevokeUserApiKey', data: { uid, key_id: req.params.key_id } },
        context,
      );
      return reply.code(204).send(null);
    },
  );
}
