/** The webhook as the API answers it (never its secret), its ingress URL, and who may see one. */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Config } from '../../src/config.js';
import { uidParam } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Collection } from '../../src/readstore/port.js';
import type { WebhookDoc } from '../../projections/webhook/webhooks.js';
import { signatureSchemes, WEBHOOK_AUTH_MODES } from './events.js';

export const webhookResource = z.object({
  uid: z.string(),
  factory_uid: z.string(),
  name: z.string(),
  authMode: z.enum(WEBHOOK_AUTH_MODES),
  signatureScheme: z.enum(signatureSchemes).nullable().describe('The provider scheme; only with authMode signature'),
  secretName: z.string().nullable().describe('The managed team secret holding the credential, when one is used'),
  deliveryIdHeader: z.string().nullable().describe('The header the sender stamps with its own event ID (lower case)'),
  enabled: z.boolean(),
  awaiting_secret: z
    .boolean()
    .describe(
      'A provider that issues its secret after it has the URL has not given it yet (the webhook stays disabled)',
    ),
  ingress_url: z.string().describe('Where the sender posts; for url_token a {token} placeholder stands for the token'),
  created_at: z.string(),
  updated_at: z.string(),
});

/** The generated secret, in the one answer that may carry it. */
export const shownSecret = z
  .string()
  .nullable()
  .describe('The generated secret, shown this once; null when the secret was supplied or the provider issues it');

export const factoryWebhooksParams = z.object({ factory_uid: uidParam });
export const webhookParams = z.object({ factory_uid: uidParam, webhook_uid: uidParam });

const ingressUrl = (config: Config, w: Pick<WebhookDoc, 'uid' | 'auth_mode'>) =>
  `${config.webhookBaseUrl}/webhooks/w/${w.uid}${w.auth_mode === 'url_token' ? '/{token}' : ''}`;

export const toWebhookResource = (config: Config, w: WebhookDoc): z.infer<typeof webhookResource> => ({
  uid: w.uid,
  factory_uid: w.factory_uid,
  name: w.name,
  authMode: w.auth_mode,
  signatureScheme: w.signature_scheme,
  secretName: w.secret_name,
  deliveryIdHeader: w.delivery_id_header,
  enabled: w.enabled,
  awaiting_secret: w.awaiting_secret,
  ingress_url: ingressUrl(config, w),
  created_at: w.created_at,
  updated_at: w.updated_at,
});

/** A live webhook of this factory in one of the caller's teams; any other answers 404. */
export async function visibleWebhook(
  webhooks: Collection<WebhookDoc>,
  req: FastifyRequest,
  factoryUid: string,
  uid: string,
): Promise<WebhookDoc> {
  const webhook = await webhooks.get(uid);
  if (!webhook || webhook.deleted || webhook.factory_uid !== factoryUid || !req.principal?.teams.has(webhook.team_uid))
    throw new NotFound('webhook', uid);
  return webhook;
}
