/** GET the webhooks of a factory, one webhook, and its delivery log. */
import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../src/http/app.js';
import { decodeCursor, pageInfo } from '../src/http/cursor.js';
import { limitParam, uidParam } from '../src/http/schemas.js';
import { NotFound } from '../src/kernel/errors.js';
import type { Collection, Sort } from '../src/readstore/port.js';
import type { Runtime } from '../src/runtime.js';
import type { Config } from '../src/config.js';
import { factoriesProjection, type FactoryDoc } from '../projections/factories.js';
import { visibleFactory } from './factories.js';
import { webhooksProjection, type WebhookDoc } from '../projections/webhooks.js';
import { deliveryLabels, webhookDeliveriesProjection, type DeliveryDoc } from '../projections/webhook-deliveries.js';

export const ingressUrl = (config: Config, w: Pick<WebhookDoc, 'uid' | 'auth_mode'>) =>
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
export async function visibleWebhook(webhooks: Collection<WebhookDoc>, req: FastifyRequest, factoryUid: string, uid: string): Promise<WebhookDoc> {
  const webhook = await webhooks.get(uid);
  if (!webhook || webhook.deleted || webhook.factory_uid !== factoryUid || !req.principal?.teams.has(webhook.team_uid)) throw new NotFound('webhook', uid);
  return webhook;
}

const factoryParams = z.object({ uid: uidParam });
const webhookParams = z.object({ uid: uidParam, webhook_uid: uidParam });
const deliveriesQuery = z.object({ limit: limitParam(), cursor: z.string().max(1000).optional() }).strict();
const LIST_SORT: Sort = [['created_at', 'asc'], ['id', 'asc']];
const DELIVERY_SORT: Sort = [['received_at', 'desc'], ['id', 'desc']];

export default function webhookQueries(api: Api, rt: Runtime): void {
  const webhooks = rt.readModel<WebhookDoc>(webhooksProjection);
  const factories = rt.readModel<FactoryDoc>(factoriesProjection);
  const deliveries = rt.readModel<DeliveryDoc>(webhookDeliveriesProjection);

  const payloadOf = async (d: DeliveryDoc) => {
    const bytes = d.payload_blob ? await rt.blobs.read(d.payload_blob) : null;
    return bytes ? { payload: JSON.parse(bytes.toString('utf8')) as unknown } : {};
  };

  api.get('/factory/:uid/webhooks', { schema: { params: factoryParams, tags: ['webhooks'] } }, async (req) => {
    const factory = await visibleFactory(factories, req, req.params.uid);
    // At most 20 live webhooks per factory: one page holds them all.
    const page = await webhooks.find({ filter: { factory_uid: factory.uid, deleted: false }, sort: LIST_SORT, limit: 100 });
    return { webhooks: page.items.map((w) => toWebhookResource(rt.config, w)) };
  });

  api.get('/factory/:uid/webhooks/:webhook_uid', { schema: { params: webhookParams, tags: ['webhooks'] } }, async (req) =>
    toWebhookResource(rt.config, await visibleWebhook(webhooks, req, req.params.uid, req.params.webhook_uid)),
  );

  api.get('/factory/:uid/webhooks/:webhook_uid/deliveries', { schema: { params: webhookParams, querystring: deliveriesQuery, tags: ['webhooks'] } }, async (req) => {
    const webhook = await visibleWebhook(webhooks, req, req.params.uid, req.params.webhook_uid);
    const page = await deliveries.find({
      filter: { webhook_uid: webhook.uid, kind: 'delivery' },
      sort: DELIVERY_SORT,
      limit: req.query.limit,
      after: decodeCursor(req.query.cursor, DELIVERY_SORT),
    });
    const items = await Promise.all(
      page.items.map(async (d) => ({
        delivery_id: d.delivery_id,
        status: d.status,
        label: deliveryLabels[d.status],
        size_bytes: d.size_bytes,
        received_at: d.received_at,
        ...(d.duplicate_of ? { duplicate_of: d.duplicate_of } : {}),
        ...(await payloadOf(d)),
      })),
    );
    return { deliveries: items, page_info: pageInfo(DELIVERY_SORT, page.next) };
  });
}
