/**
 * Invitations: how a member added by email gets a first API key. Adding a member answers the same
 * whether the address had an account or not (no key, an invitation code); the code gives its
 * holder the account's first key, once, and only while the account has none and belongs to the
 * inviting team alone. So an admin never obtains a key to an account that opens another team.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { hashApiKey } from '../../src/http/api-key.js';
import type { Api } from '../../src/http/api.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { usersProjection } from '../../projections/user/users.js';
import { userDecider } from './user-decider.js';
import { userStream } from './events.js';
import { newKeyGrant } from './api-keys.js';

/** `sfinv_<user uid>.<32 random bytes>`: the uid says which stream to ask, the rest is the secret. */
const CODE = /^sfinv_([0-9a-f-]{36})\.[A-Za-z0-9_-]{43}$/;

/** A new invitation for `uid`: the code is shown once, only its hash is recorded. */
export function newInvitation(uid: string): { code: string; hash: string } {
  const code = `sfinv_${uid}.${randomBytes(32).toString('base64url')}`;
  return { code, hash: hashApiKey(code) };
}

const redeemBody = z.object({ code: z.string().min(1).max(200) }).strict();

const redeemed = z.object({
  user: z.object({ uid: z.string(), email: z.string(), display_name: z.string() }),
  api_key: z.string().describe("The account's first API key, shown this once"),
});

export default function invitationRoutes(api: Api, rt: Runtime): void {
  const users = rt.readModel(usersProjection);

  // Public: the invitee has no key yet. The code travels in the body, so no log line holds it.
  api.post(
    '/invitations/redeem',
    {
      config: { public: true },
      schema: { body: redeemBody, response: { 201: redeemed }, tags: ['teams'], security: [] },
    },
    async (req, reply) => {
      const uid = CODE.exec(req.body.code)?.[1];
      if (!uid) throw new NotFound('invitation');
      const { key, grant } = newKeyGrant({ label: 'invitation' });
      const context: CommandContext = {
        now: req.now,
        // Whoever holds the code acts as the invited user.
        actor: { type: 'user', uid },
        teams: {},
        team_uid: null,
        correlation_id: req.id,
        causation_id: null,
        request_id: req.id,
      };
      await rt.execute(
        userStream(uid),
        userDecider,
        {
          type: 'RedeemInvitation',
          data: { uid, invitation_hash: hashApiKey(req.body.code), ...grant },
        },
        context,
      );
      const user = (await users.get(uid))!;
      return reply.code(201).send({
        user: { uid: user.uid, email: user.email, display_name: user.display_name },
        api_key: key.key,
      });
    },
  );
}
