/**
 * POST /teams/{team_uid}/outbound-webhooks, PATCH and DELETE /teams/{team_uid}/outbound-webhooks/{webhook_uid},
 * and POST …/{webhook_uid}/rotate-secret: team admins register the endpoints that hear of the
 * team's runs, tasks and inbox. Each gets a Standard Webhooks secret, shown once.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { commandContext } from '../../src/http/context.js';
import { noContent } from '../../src/http/schemas.js';
import { timeOrderedId } from '../../src/ids.js';
import { InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { parseAllowedRanges, urlProblem } from '../../src/net/egress.js';
import type { Runtime } from '../../src/runtime.js';
import { sealerFor } from '../../src/sealing.js';
import { outboundWebhooksProjection } from '../../projections/outbound/outbound-webhooks.js';
import { assertAdmin, type OutboundWebhookCommand, outboundWebhookDecider } from './outbound-webhook-decider.js';
import { outboundWebhooksStream } from './events.js';
import {
  createdOutboundWebhook,
  createOutboundWebhookBody,
  outboundWebhookParams,
  outboundWebhookResource,
  teamParams,
  toOutboundWebhookResource,
  updateOutboundWebhookBody,
} from './resource.js';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

const tags = ['outbound webhooks'];

/** What the endpoint routes share: the team's stream, the answer, and the reachability check. */
function outboundRouting(rt: Runtime) {
  const endpoints = rt.readModel(outboundWebhooksProjection);
  const allowed = parseAllowedRanges(rt.config.OUTBOUND_ALLOWED_RANGES);
  return {
    sealer: sealerFor(rt.config),
    execute: (team: string, command: OutboundWebhookCommand, context: CommandContext) =>
      rt.execute(outboundWebhooksStream(team), outboundWebhookDecider, command, context),
    current: async (uid: string) => {
      const doc = await endpoints.get(uid);
      if (!doc) throw new NotFound('outbound webhook', uid);
      return toOutboundWebhookResource(doc);
    },
    /**
     * An endpoint the server may reach, else a 400 naming `body.url`. Asked only once the caller is
     * known to manage the team's endpoints: the answer tells whether a name resolves to an address
     * inside, which is no one else's to learn.
     */
    assertReachable: async (url: string | undefined) => {
      const problem = url === undefined ? null : await urlProblem(url, allowed);
      if (problem) throw new InvalidRequest(`url: ${problem}`, [{ path: 'body.url', message: problem }]);
    },
  };
}

type OutboundRouting = ReturnType<typeof outboundRouting>;

export default function outboundWebhookRoutes(api: Api, rt: Runtime): void {
  const routing = outboundRouting(rt);
  createRoute(api, routing);
  updateRoute(api, routing);
  deleteRoute(api, routing);
  rotateSecretRoute(api, routing);
}

function createRoute(api: Api, { sealer, execute, current, assertReachable }: OutboundRouting): void {
  api.post(
    '/teams/:team_uid/outbound-webhooks',
    {
      schema: { params: teamParams, body: createOutboundWebhookBody, response: { 201: createdOutboundWebhook }, tags },
      config: { idempotent: true },
    },
    async (req, reply) => {
      const { team_uid } = req.params;
      const context = commandContext(req);
      assertAdmin(team_uid, context);
      await assertReachable(req.body.url);
      const uid = timeOrderedId();
      const secret = newSecret();
      const { url, event_types, description, enabled } = req.body;
      await execute(
        team_uid,
        {
          type: 'CreateOutboundWebhook',
          data: {
            uid,
            team_uid,
            url,
            event_types,
            description: description ?? null,
            enabled,
            secret: sealer.seal(secret),
          },
        },
        context,
      );
      return reply.code(201).send({ ...(await current(uid)), secret });
    },
  );
}

function updateRoute(api: Api, { execute, current, assertReachable }: OutboundRouting): void {
  api.patch(
    '/teams/:team_uid/outbound-webhooks/:webhook_uid',
    {
      schema: {
        params: outboundWebhookParams,
        body: updateOutboundWebhookBody,
        response: { 200: outboundWebhookResource },
        tags,
      },
    },
    async (req) => {
      const { team_uid, webhook_uid } = req.params;
      const context = commandContext(req);
      assertAdmin(team_uid, context);
      await assertReachable(req.body.url);
      await execute(
        team_uid,
        { type: 'UpdateOutboundWebhook', data: { uid: webhook_uid, team_uid, changes: req.body } },
        context,
      );
      return current(webhook_uid);
    },
  );
}

function deleteRoute(api: Api, { execute }: OutboundRouting): void {
  api.delete(
    '/teams/:team_uid/outbound-webhooks/:webhook_uid',
    { schema: { params: outboundWebhookParams, response: { 204: noContent() }, tags } },
    async (req, reply) => {
      const { team_uid, webhook_uid } = req.params;
      await execute(
        team_uid,
        { type: 'DeleteOutboundWebhook', data: { uid: webhook_uid, team_uid } },
        commandContext(req),
      );
      return reply.code(204).send(null);
    },
  );
}

function rotateSecretRoute(api: Api, { sealer, execute }: OutboundRouting): void {
  api.post(
    '/teams/:team_uid/outbound-webhooks/:webhook_uid/rotate-secret',
    {
      schema: {
        params: outboundWebhookParams,
        response: { 200: z.object({ secret: createdOutboundWebhook.shape.secret }) },
        tags,
      },
    },
    async (req) => {
      const { team_uid, webhook_uid } = req.params;
      const secret = newSecret();
      await execute(
        team_uid,
        { type: 'RotateOutboundWebhookSecret', data: { uid: webhook_uid, team_uid, secret: sealer.seal(secret) } },
        commandContext(req),
      );
      return { secret };
    },
  );
}
