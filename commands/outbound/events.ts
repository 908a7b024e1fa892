/**
 * Outbound webhooks: a team's endpoints (one stream per team, `outboundwebhooks-<team_uid>`, so
 * the 20-per-team limit is decided on the revision read) and each delivery of one event to one
 * endpoint (`outbounddelivery-<delivery_id>`, its id derived from the event and the endpoint, so
 * an event is scheduled for an endpoint once however often it is seen).
 */

/** A team has at most this many endpoints. */
export const MAX_ENDPOINTS_PER_TEAM = 20;

import { GUARDRAIL_EVENT_TYPES } from '../guardrail/events.js';

/** The events an endpoint may subscribe to; `run.*`, `task.*`, `inbox.*`, `webhook.*`, `budget.*` and `*` name groups. */
export const OUTBOUND_EVENT_TYPES = [
  'run.queued',
  'run.in_progress',
  'run.succeeded',
  'run.failed',
  'run.errored',
  'run.blocked',
  'run.cancelled',
  'task.stage_changed',
  'inbox.notification_raised',
  'inbox.notification_cleared',
  'webhook.delivery_rejected',
  // Guardrails (issue #33): budgets' thresholds and refusals, and runs' approvals.
  ...GUARDRAIL_EVENT_TYPES,
] as const;
export type OutboundEventType = (typeof OUTBOUND_EVENT_TYPES)[number];

/** Whether a subscription (`run.succeeded`, `run.*`, `*`) takes an event type. */
export const subscribes = (subscriptions: readonly string[], type: string) =>
  subscriptions.some((s) => s === '*' || s === type || (s.endsWith('.*') && type.startsWith(s.slice(0, -1))));

export interface OutboundWebhookFields {
  url: string;
  description: string | null;
  event_types: string[];
  enabled: boolean;
}

type Place = { uid: string; team_uid: string };

export type OutboundWebhookEvent =
  | {
      type: 'OutboundWebhookCreated';
      data: Place &
        OutboundWebhookFields & {
          /** The Standard Webhooks signing secret (`whsec_…`), sealed under SECRETS_KEY. */
          secret: string;
          /** The user who registered it: told in the inbox when the server disables it. */
          owner_uid: string;
          created_at: string;
        };
    }
  /** Enabling an endpoint again forgets its failures. */
  | { type: 'OutboundWebhookUpdated'; data: Place & { changes: Partial<OutboundWebhookFields> } }
  | { type: 'OutboundWebhookSecretRotated'; data: Place & { secret: string } }
  | { type: 'OutboundWebhookDeleted'; data: Place }
  /** Its first failed attempt since it last succeeded (or ever). */
  | { type: 'OutboundWebhookFailing'; data: Place & { since: string } }
  | { type: 'OutboundWebhookRecovered'; data: Place }
  /** It failed every attempt for the whole disable window: the server stops sending to it. */
  | { type: 'OutboundWebhookDisabled'; data: Place & { failing_since: string; reason: string } };

type DeliveryOutcome = 'delivered' | 'retry' | 'failed';

export type OutboundDeliveryEvent =
  | {
      type: 'OutboundDeliveryScheduled';
      data: {
        delivery_id: string;
        webhook_uid: string;
        team_uid: string;
        /** `webhook-id`: the same for every endpoint and every attempt of one event, so receivers deduplicate. */
        message_id: string;
        event_type: OutboundEventType;
        /** The exact body sent (signed as it is), on every attempt. */
        body: string;
        /** The event it tells of. */
        source_event_id: string;
        scheduled_at: string;
      };
    }
  | {
      type: 'OutboundDeliveryAttempted';
      data: {
        delivery_id: string;
        webhook_uid: string;
        team_uid: string;
        attempt: number;
        at: string;
        /** The receiver's HTTP status; null when no answer came (refused, timed out, unreachable). */
        status_code: number | null;
        latency_ms: number;
        error: string | null;
        outcome: DeliveryOutcome;
        /** When the next attempt is due (`retry` only). */
        next_attempt_at: string | null;
      };
    }
  /** Not sent any more: its endpoint was disabled or deleted. */
  | {
      type: 'OutboundDeliveryAbandoned';
      data: { delivery_id: string; webhook_uid: string; team_uid: string; reason: string };
    };

export const outboundWebhooksStream = (teamUid: string) => `outboundwebhooks-${teamUid}`;
export const outboundDeliveryStream = (deliveryId: string) => `outbounddelivery-${deliveryId}`;
