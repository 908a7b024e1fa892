/** GET the webhooks of a factory, one webhook, and its delivery log. */
import { z } from 'zod';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { limitParam, pageInfoSchema } from '../../src/http/schemas.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { factoriesProjection, visibleFactory } from '../../commands/factory/public.js';
import { webhooksProjection } from '../../projections/webhook/webhooks.js';
import {
  factoryWebhooksParams,
  toWebhookResource,
  visibleWebhook,
  webhookParams,
  webhookResource,
} from '../../commands/webhook/public.js';
import {
  deliveryLabels,
  webhookDeliveriesProjection,
  type DeliveryDoc,
} from '../../projections/webhook/webhook-deliveries.js';
import type { Api } from '../../src/http/api.js';

const deliveriesQuery = z.object({ limit: limitParam(), cursor: z.string().max(1000).optional() }).strict();
const LIST_SORT: Sort = [
  ['created_at', 'asc'],
  ['id', 'asc'],
];
const DELIVERY_SORT: Sort = [
  ['received_at', 'desc'],
  ['id', 'desc'],
];

const webhooksResponse = z.object({ webhooks: z.array(webhookResource).describe('Oldest first') });

const refusedRun = z.object({
  automation_id: z.string(),
  automation_name: z.string().describe('Its name when the run was refused'),
  replay_id: z.string().nullable().describe('The replay of the delivery that fired it; null for the delivery itself'),
  status: z.int().describe('The HTTP status of the problem'),
  code: z.string().describe('The problem code, such as budget_exceeded'),
  detail: z.string(),
  refused_at: z.string(),
});
/** One entry of the delivery log. */
const deliveryItem = z.object({
  delivery_id: z.string(),
  status: z.enum(['accepted', 'duplicate', 'rejected_auth', 'rejected_invalid_json', 'rejected_too_large']),
  label: z.enum(deliveryLabels).describe('The status as the delivery log shows it'),
  size_bytes: z.int(),
  received_at: z.string(),
  duplicate_of: z
    .string()
    .optional()
    .describe('Duplicates only: the delivery that was accepted with the same identity'),
  payload: z.unknown().optional().describe('Accepted deliveries only: the JSON body as received'),
  count: z
    .int()
    .optional()
    .describe(
      'Rejections of senders not authenticated past the failed-authentication budget are counted, not logged one by one: this entry stands for `count` of them (size_bytes is their sum, received_at the last)',
    ),
  refused_runs: z
    .array(refusedRun)
    .optional()
    .describe(
      'Extension: the automations this delivery (or a replay of it) triggered whose runs could not start (a budget with no room, say), the newest 100; absent when none was refused',
    ),
});
const deliveriesResponse = z.object({
  deliveries: z.array(deliveryItem).describe('Newest first'),
  page_info: pageInfoSchema,
});

export default function webhookQueries(api: Api, rt: Runtime): void {
  const webhooks = rt.readModel(webhooksProjection);
  const factories = rt.readModel(factoriesProjection);
  const deliveries = rt.readModel(webhookDeliveriesProjection);

  const tags = ['webhooks'];
  const payloadOf = async (d: DeliveryDoc) => {
    const bytes = d.payload_blob ? await rt.blobs.read(d.payload_blob) : null;
    return bytes ? { payload: JSON.parse(bytes.toString('utf8')) as unknown } : {};
  };

  const listSchema = { params: factoryWebhooksParams, response: { 200: webhooksResponse }, tags };
  api.get('/factory/:factory_uid/webhooks', { schema: listSchema }, async (req) => {
    const factory = await visibleFactory(factories, req, req.params.factory_uid);
    // At most 20 live webhooks per factory: one page holds them all.
    const page = await webhooks.find({
      filter: { factory_uid: factory.uid, deleted: false },
      sort: LIST_SORT,
      limit: 100,
    });
    return { webhooks: page.items.map((w) => toWebhookResource(rt.config, w)) };
  });

  api.get(
    '/factory/:factory_uid/webhooks/:webhook_uid',
    { schema: { params: webhookParams, response: { 200: webhookResource }, tags } },
    async (req) =>
      toWebhookResource(rt.config, await visibleWebhook(webhooks, req, req.params.factory_uid, req.params.webhook_uid)),
  );

  api.get(
    '/factory/:factory_uid/webhooks/:webhook_uid/deliveries',
    {
      schema: {
        params: webhookParams,
        querystring: deliveriesQuery,
        response: { 200: deliveriesResponse },
        tags,
      },
    },
    async (req) => {
      const webhook = await visibleWebhook(webhooks, req, req.params.factory_uid, req.params.webhook_uid);
      const page = await deliveries.find({
        filter: { webhook_uid: webhook.uid },
        sort: DELIVERY_SORT,
        limit: req.query.limit,
        after: decodeCursor(req.query.cursor, DELIVERY_SORT),
      });
      const items = await Promise.all(
        page.items.map(
          async (d): Promise<z.infer<typeof deliveryItem>> => ({
            delivery_id: d.delivery_id,
            status: d.status,
            label: deliveryLabels[d.status],
            size_bytes: d.size_bytes,
            received_at: d.received_at,
            ...(d.duplicate_of ? { duplicate_of: d.duplicate_of } : {}),
            ...(d.count !== undefined ? { count: d.count } : {}),
            ...(d.refused_runs?.length ? { refused_runs: d.refused_runs.map(({ run_id: _, ...r }) => r) } : {}),
            ...(await payloadOf(d)),
          }),
        ),
      );
      return { deliveries: items, page_info: pageInfo(DELIVERY_SORT, page.next) };
    },
  );
}
