/**
 * Outbound webhook deliveries, one document each with its attempts: the delivery log the API
 * reads (newest first per endpoint), and what the dispatcher asks for (pending ones by due time).
 */
import { projection } from '../../src/projector/projection.js';
import type { OutboundDeliveryEvent, OutboundEventType } from '../../commands/outbound/events.js';

interface DeliveryAttemptDoc {
  attempt: number;
  at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

export interface OutboundDeliveryDoc {
  [field: string]: unknown;
  delivery_id: string;
  webhook_uid: string;
  team_uid: string;
  message_id: string;
  event_type: OutboundEventType;
  body: string;
  status: 'pending' | 'delivered' | 'failed' | 'abandoned';
  attempts: DeliveryAttemptDoc[];
  created_at: string;
  /** When the next attempt is due; null once it is settled. */
  next_attempt_at: string | null;
  finished_at: string | null;
  reason: string | null;
}

export const outboundDeliveriesProjection = projection<OutboundDeliveryEvent, OutboundDeliveryDoc>({
  name: 'outbound_deliveries',
  version: 1,
  indexes: [
    ['status', 'next_attempt_at'],
    ['webhook_uid', 'created_at'],
    ['webhook_uid', 'status', 'created_at'],
  ],
  on: {
    OutboundDeliveryScheduled: (e, docs) => {
      const d = e.data;
      docs.put(d.delivery_id, {
        delivery_id: d.delivery_id,
        webhook_uid: d.webhook_uid,
        team_uid: d.team_uid,
        message_id: d.message_id,
        event_type: d.event_type,
        body: d.body,
        status: 'pending',
        attempts: [],
        created_at: d.scheduled_at,
        next_attempt_at: d.scheduled_at,
        finished_at: null,
        reason: null,
      });
    },
    OutboundDeliveryAttempted: async (e, docs) => {
      const doc = await docs.get(e.data.delivery_id);
      if (!doc) return;
      const { attempt, at, status_code, latency_ms, error, outcome, next_attempt_at } = e.data;
      docs.patch(doc.delivery_id, {
        // Applied twice, an attempt is kept once.
        attempts: [
          ...doc.attempts.filter((a) => a.attempt !== attempt),
          { attempt, at, status_code, latency_ms, error },
        ],
        status: outcome === 'retry' ? 'pending' : outcome,
        next_attempt_at,
        finished_at: outcome === 'retry' ? null : e.metadata.occurred_at,
      });
    },
    OutboundDeliveryAbandoned: (e, docs) =>
      docs.patch(e.data.delivery_id, {
        status: 'abandoned',
        next_attempt_at: null,
        finished_at: e.metadata.occurred_at,
        reason: e.data.reason,
      }),
  },
});
