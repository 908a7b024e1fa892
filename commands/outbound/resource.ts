/** Outbound webhook endpoints and their deliveries as the API takes and answers them. */
import { z } from 'zod';
import { limitParam, pageInfoSchema, uidParam } from '../../src/http/schemas.js';
import type { OutboundDeliveryDoc } from '../../projections/outbound/outbound-deliveries.js';
import type { OutboundWebhookDoc } from '../../projections/outbound/outbound-webhooks.js';
import { OUTBOUND_EVENT_TYPES } from './events.js';

const GROUPS = ['*', ...new Set(OUTBOUND_EVENT_TYPES.map((t) => `${t.split('.')[0]}.*`))];

const eventType = z
  .string()
  .max(64)
  .refine((t) => (OUTBOUND_EVENT_TYPES as readonly string[]).includes(t) || GROUPS.includes(t), {
    message: `one of ${[...OUTBOUND_EVENT_TYPES, ...GROUPS].join(', ')}`,
  });

const fields = {
  url: z.url({ protocol: /^https?$/ }).max(2048),
  description: z.string().trim().max(500).nullable(),
  event_types: z
    .array(eventType)
    .min(1)
    .max(20)
    .transform((ts) => [...new Set(ts)]),
  enabled: z.boolean(),
};

export const createOutboundWebhookBody = z
  .object({
    url: fields.url,
    event_types: fields.event_types,
    description: fields.description.optional(),
    enabled: fields.enabled.default(true),
  })
  .strict();

export const updateOutboundWebhookBody = z
  .object({
    url: fields.url.optional(),
    event_types: fields.event_types.optional(),
    description: fields.description.optional(),
    enabled: fields.enabled.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one of url, event_types, description, enabled' });

export const teamParams = z.object({ team_uid: uidParam });
export const outboundWebhookParams = z.object({ team_uid: uidParam, webhook_uid: uidParam });

export const outboundWebhookResource = z.object({
  uid: z.string(),
  team_uid: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  event_types: z.array(z.string()).describe('Event types sent to it; `run.*` and `*` name groups'),
  enabled: z.boolean(),
  disabled_reason: z.string().nullable().describe('Why the server disabled it (it kept failing); null otherwise'),
  failing_since: z.string().nullable().describe('Its first failed attempt since it last succeeded'),
  owner_uid: z.string().describe('Who registered it: told in the inbox should the server disable it'),
  created_at: z.string(),
  updated_at: z.string(),
});

export const createdOutboundWebhook = outboundWebhookResource.extend({
  secret: z
    .string()
    .describe('The Standard Webhooks signing secret (`whsec_…`): shown here and on rotation only, never again'),
});

export const toOutboundWebhookResource = (d: OutboundWebhookDoc): z.infer<typeof outboundWebhookResource> => ({
  uid: d.uid,
  team_uid: d.team_uid,
  url: d.url,
  description: d.description,
  event_types: d.event_types,
  enabled: d.enabled,
  disabled_reason: d.disabled_reason,
  failing_since: d.failing_since,
  owner_uid: d.owner_uid,
  created_at: d.created_at,
  updated_at: d.updated_at,
});

export const deliveriesQuery = z
  .object({
    status: z.enum(['pending', 'delivered', 'failed', 'abandoned']).optional(),
    limit: limitParam(100, 50),
    cursor: z.string().max(1000).optional(),
  })
  .strict();

const attempt = z.object({
  attempt: z.int(),
  at: z.string(),
  status_code: z.int().nullable().describe('The receiver’s HTTP status; null when no answer came'),
  latency_ms: z.int(),
  error: z.string().nullable(),
});

export const deliveryResource = z.object({
  delivery_id: z.string(),
  message_id: z.string().describe('The `webhook-id` header: the same on every attempt, for deduplication'),
  event_type: z.string(),
  status: z.enum(['pending', 'delivered', 'failed', 'abandoned']),
  attempts: z.array(attempt).describe('Oldest first'),
  created_at: z.string(),
  next_attempt_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  reason: z.string().nullable().describe('Why an abandoned delivery was not sent'),
  payload: z.record(z.string(), z.unknown()).describe('The body sent: `{type, timestamp, data}`'),
});

export const deliveriesAnswer = z.object({ deliveries: z.array(deliveryResource), page_info: pageInfoSchema });

export const toDeliveryResource = (d: OutboundDeliveryDoc): z.infer<typeof deliveryResource> => ({
  delivery_id: d.delivery_id,
  message_id: d.message_id,
  event_type: d.event_type,
  status: d.status,
  attempts: d.attempts,
  created_at: d.created_at,
  next_attempt_at: d.next_attempt_at,
  finished_at: d.finished_at,
  reason: d.reason,
  payload: JSON.parse(d.body) as Record<string, unknown>,
});
