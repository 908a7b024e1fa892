/** POST/PATCH/DELETE webhooks of a factory and POST .../rotate-secret. Secrets leave only in these answers. */
import { timeOrderedId } from '../../src/ids.js';
import { z } from 'zod';
import { commandContext } from '../../src/http/context.js';
import { noContent } from '../../src/http/schemas.js';
import { InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { webhooksProjection } from '../../projections/webhook/webhooks.js';
import { factoryDecider } from '../factory/public.js';
import { factoryStream } from '../factory/events.js';
import { sealerFor } from '../../src/sealing.js';
import { teamSecretsDecider } from '../secret/public.js';
import { teamSecretsStream } from '../secret/events.js';
import { webhooksDecider } from './webhooks-decider.js';
import {
  signatureSchemes,
  type SignatureScheme,
  WEBHOOK_AUTH_MODES,
  type WebhookAuthMode,
  type WebhookSecretRef,
  webhooksStream,
} from './events.js';
import { assertUsableSecret, deliveryIdHeaderError, generatedSecret } from './secrets.js';
import {
  factoryWebhooksParams,
  shownSecret,
  toWebhookResource,
  visibleWebhook,
  webhookParams,
  webhookResource,
} from './resource.js';
import type { Api } from '../../src/http/api.js';
import { own } from '../../src/own-keys.js';

const deliveryIdHeader = z
  .string()
  .max(100)
  .superRefine((v, ctx) => {
    const error = deliveryIdHeaderError(v);
    if (error) ctx.addIssue({ code: 'custom', message: error });
  })
  .transform((v) => v.toLowerCase())
  .nullable();

const name = z.string().trim().min(1).max(200);
const secret = z.string().max(1024);
const secretName = z
  .string()
  .max(100)
  .regex(/^[A-Za-z0-9_.-]{1,100}$/, 'letters, digits, _ . -');

const createBody = z
  .object({
    name,
    authMode: z.enum(WEBHOOK_AUTH_MODES).default('token'),
    signatureScheme: z.enum(signatureSchemes).optional(),
    secret: secret.optional(),
    secretName: secretName.optional(),
    deliveryIdHeader: deliveryIdHeader.optional(),
    enabled: z.boolean().default(true),
  })
  .strict()
  .superRefine((b, ctx) => {
    if ((b.authMode === 'signature') !== (b.signatureScheme !== undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['signatureScheme'],
        message: 'signatureScheme is required with authMode signature and only then',
      });
    if (b.secret !== undefined && b.secretName !== undefined)
      ctx.addIssue({ code: 'custom', path: ['secretName'], message: 'give secret or secretName, not both' });
  });

const patchBody = z
  .object({
    name: name.optional(),
    enabled: z.boolean().optional(),
    deliveryIdHeader: deliveryIdHeader.optional(),
    secret: secret.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one field to change' });

const rotateBody = z.object({ secret: secret.optional(), secretName: secretName.optional() }).strict().nullish();

const createdWebhook = webhookResource.extend({ secret: shownSecret });
const rotatedSecret = z.object({ secret: shownSecret });

const tags = ['webhooks'];

/** What the webhook routes share: the factory's team, the secret to store, and the answer. */
function webhookRouting(rt: Runtime) {
  const webhooks = rt.readModel(webhooksProjection);
  const sealer = sealerFor(rt.config);

  /** A managed team secret must exist when a webhook is tied to it. */
  const assertTeamSecret = async (
    teamUid: string,
    secretName: string,
    mode: WebhookAuthMode,
    scheme: SignatureScheme | null,
  ) => {
    const state = await rt.state(teamSecretsDecider, teamSecretsStream(teamUid));
    const stored = own(state.secrets, secretName);
    if (!stored)
      throw new InvalidRequest(`no team secret named ${secretName}`, [
        { path: 'body.secretName', message: 'no such team secret' },
      ]);
    assertUsableSecret(sealer.open(stored.sealed) ?? '', mode, scheme);
  };

  return {
    rt,
    webhooks,
    sealer,
    /** The factory as its own stream tells it (404 unless live and in one of the caller's teams). */
    factoryTeam: async (uid: string, teams: { has(team: string): boolean } | undefined) => {
      const state = await rt.state(factoryDecider, factoryStream(uid));
      if (state.status !== 'live' || !teams?.has(state.team_uid)) throw new NotFound('factory', uid);
      return state.team_uid;
    },
    /** Chooses and seals the secret to store; `shown` is the clear text this one answer may carry. */
    secretFor: async (
      teamUid: string,
      mode: WebhookAuthMode,
      scheme: SignatureScheme | null,
      body: { secret?: string | undefined; secretName?: string | undefined },
    ) => {
      if (body.secretName !== undefined) {
        await assertTeamSecret(teamUid, body.secretName, mode, scheme);
        return { ref: { team_secret: body.secretName } as WebhookSecretRef, shown: null };
      }
      if (body.secret !== undefined) assertUsableSecret(body.secret, mode, scheme);
      const clear = body.secret ?? generatedSecret(mode, scheme);
      return {
        ref: clear === null ? null : { sealed: sealer.seal(clear) },
        shown: body.secret === undefined ? clear : null,
      };
    },
    current: async (factoryUid: string, uid: string, req: Parameters<typeof visibleWebhook>[1]) =>
      toWebhookResource(rt.config, await visibleWebhook(webhooks, req, factoryUid, uid)),
  };
}

type WebhookRouting = ReturnType<typeof webhookRouting>;

export default function webhookRoutes(api: Api, rt: Runtime): void {
  const routing = webhookRouting(rt);
  createRoute(api, routing);
  patchRoute(api, routing);
  deleteRoute(api, routing);
  rotateSecretRoute(api, routing);
}

function createRoute(api: Api, { rt, factoryTeam, secretFor, current }: WebhookRouting): void {
  api.post(
    '/factory/:factory_uid/webhooks',
    {
      schema: { params: factoryWebhooksParams, body: createBody, response: { 201: createdWebhook }, tags },
      config: { idempotent: true },
    },
    async (req, reply) => {
      const { factory_uid } = req.params;
      const teamUid = await factoryTeam(factory_uid, req.principal?.teams);
      const b = req.body;
      const scheme = b.signatureScheme ?? null;
      const { ref, shown } = await secretFor(teamUid, b.authMode, scheme, b);
      const uid = timeOrderedId();
      await rt.execute(
        webhooksStream(factory_uid),
        webhooksDecider,
        {
          type: 'CreateWebhook',
          data: {
            uid,
            factory_uid,
            team_uid: teamUid,
            name: b.name,
            auth_mode: b.authMode,
            signature_scheme: scheme,
            delivery_id_header: b.deliveryIdHeader ?? null,
            enabled: b.enabled,
            secret: ref,
          },
        },
        commandContext(req),
      );
      return reply.code(201).send({ ...(await current(factory_uid, uid, req)), secret: shown });
    },
  );
}

function patchRoute(api: Api, { rt, webhooks, sealer, current }: WebhookRouting): void {
  api.patch(
    '/factory/:factory_uid/webhooks/:webhook_uid',
    { schema: { params: webhookParams, body: patchBody, response: { 200: webhookResource }, tags } },
    async (req) => {
      const { factory_uid, webhook_uid } = req.params;
      const webhook = await visibleWebhook(webhooks, req, factory_uid, webhook_uid);
      const { secret: given, ...fields } = req.body;
      if (given !== undefined) assertUsableSecret(given, webhook.auth_mode, webhook.signature_scheme);
      const changes = { name: fields.name, enabled: fields.enabled, delivery_id_header: fields.deliveryIdHeader };
      await rt.execute(
        webhooksStream(factory_uid),
        webhooksDecider,
        {
          type: 'UpdateWebhook',
          data: {
            uid: webhook_uid,
            changes,
            ...(given !== undefined ? { secret: { sealed: sealer.seal(given) } } : {}),
          },
        },
        commandContext(req),
      );
      return current(factory_uid, webhook_uid, req);
    },
  );
}

function deleteRoute(api: Api, { rt, webhooks }: WebhookRouting): void {
  api.delete(
    '/factory/:factory_uid/webhooks/:webhook_uid',
    { schema: { params: webhookParams, response: { 204: noContent() }, tags } },
    async (req, reply) => {
      const { factory_uid, webhook_uid } = req.params;
      await visibleWebhook(webhooks, req, factory_uid, webhook_uid);
      await rt.execute(
        webhooksStream(factory_uid),
        webhooksDecider,
        { type: 'DeleteWebhook', data: { uid: webhook_uid } },
        commandContext(req),
      );
      return reply.code(204).send(null);
    },
  );
}

function rotateSecretRoute(api: Api, { rt, webhooks, secretFor }: WebhookRouting): void {
  api.post(
    '/factory/:factory_uid/webhooks/:webhook_uid/rotate-secret',
    { schema: { params: webhookParams, body: rotateBody, response: { 200: rotatedSecret }, tags } },
    async (req) => {
      const { factory_uid, webhook_uid } = req.params;
      const webhook = await visibleWebhook(webhooks, req, factory_uid, webhook_uid);
      const { ref, shown } = await secretFor(
        webhook.team_uid,
        webhook.auth_mode,
        webhook.signature_scheme,
        req.body ?? {},
      );
      if (ref === null) {
        throw new InvalidRequest(`${webhook.signature_scheme} issues its own secret: give it as secret or secretName`, [
          { path: 'body.secret', message: 'required for this provider' },
        ]);
      }
      await rt.execute(
        webhooksStream(factory_uid),
        webhooksDecider,
        { type: 'RotateWebhookSecret', data: { uid: webhook_uid, secret: ref } },
        commandContext(req),
      );
      return { secret: shown };
    },
  );
}
