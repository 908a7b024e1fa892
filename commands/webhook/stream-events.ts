/**
 * What inbound webhooks tell the event streams: each delivery received (accepted, duplicate or
 * rejected), as the delivery log lists it; the team's outbound webhooks hear of the rejected ones.
 * Readable by the members of the factory's team (`canReadFactory`), as the delivery log is.
 */
import { z } from 'zod';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { StreamEventSource, StreamItem } from '../../src/streams/stream-events.js';
import { canReadFactory } from '../factory/events.js';
import type { DeliveryEvent } from './events.js';

const base = {
  webhook_uid: z.string(),
  factory_uid: z.string(),
  delivery_id: z.string(),
  size_bytes: z.number().int(),
  received_at: z.string(),
};
const rejectedSchema = z.object({ ...base, reason: z.enum(['auth', 'invalid_json', 'too_large']) });
const acceptedSchema = z.object(base);
const duplicateSchema = z.object({ ...base, duplicate_of: z.string().describe('The delivery it repeats') });

const NAMES = {
  DeliveryAccepted: 'webhook.delivery_accepted',
  DeliveryDuplicated: 'webhook.delivery_duplicated',
  DeliveryRejected: 'webhook.delivery_rejected',
} as const;

async function mapDelivery(_rt: unknown, event: RecordedEvent): Promise<StreamItem | null> {
  const e = event as unknown as DeliveryEvent;
  const type = NAMES[e.type as keyof typeof NAMES];
  if (!type) return null;
  const d = e.data;
  const data: Record<string, unknown> = {
    webhook_uid: d.webhook_uid,
    factory_uid: d.factory_uid,
    delivery_id: d.delivery_id,
    size_bytes: d.size_bytes,
    received_at: d.received_at,
    ...(e.type === 'DeliveryRejected' ? { reason: e.data.reason } : {}),
    ...(e.type === 'DeliveryDuplicated' ? { duplicate_of: e.data.duplicate_of } : {}),
  };
  return {
    type,
    data,
    team_uid: d.team_uid,
    factory_uid: d.factory_uid,
    run: null,
    readable: (viewer) => canReadFactory(d.team_uid, viewer.principal, viewer.team),
  };
}

export const webhookStreamEvents: StreamEventSource = {
  from: Object.keys(NAMES),
  types: {
    'webhook.delivery_accepted': { feeds: ['team'], description: 'A delivery accepted', schema: acceptedSchema },
    'webhook.delivery_duplicated': {
      feeds: ['team'],
      description: 'A delivery repeating one accepted before',
      schema: duplicateSchema,
    },
    'webhook.delivery_rejected': {
      feeds: ['team'],
      description: 'A delivery refused: auth, invalid JSON, too large',
      schema: rejectedSchema,
    },
  },
  map: mapDelivery,
};
