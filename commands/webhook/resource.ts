/** The webhook as the API answers it (never its secret), its ingress URL, and who may see one. */
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../src/config.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Collection } from '../../src/readstore/port.js';
import type { WebhookDoc } from '../../projections/webhooks.js';

const ingressUrl = (config: Config, w: Pick<WebhookDoc, 'uid' | 'auth_mode'>) =>
  `${config.webhookBaseUrl}/webhooks/w/${w.uid}${w.auth_mode === 'url_token' ? '/{token}' : ''}`;

export const toWebhookResource = (config: Config, w: WebhookDoc) => ({
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
