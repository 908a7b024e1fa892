/** Outbound webhook endpoints and deliveries: admins manage, 20 a team, health and disabling; attempts recorded once. */
import { describe, it } from 'vitest';
import { deliveryDecider } from '../../../commands/outbound/outbound-delivery-decider.js';
import { outboundWebhookDecider } from '../../../commands/outbound/outbound-webhook-decider.js';
import type { OutboundDeliveryEvent, OutboundWebhookEvent } from '../../../commands/outbound/events.js';
import { Forbidden, LimitExceeded, NotFound } from '../../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../../helpers/decider-spec.js';

const endpoints = deciderSpec(outboundWebhookDecider);
const fields = { url: 'https://h.example.com/', description: null, event_types: ['*'], enabled: true };
const created = (uid = 'w-1'): OutboundWebhookEvent => ({
  type: 'OutboundWebhookCreated',
  data: { uid, team_uid: 't-1', ...fields, secret: 'sealed', owner_uid: 'u-1', created_at: '2026-01-01T00:00:00Z' },
});
const health = (ok: boolean, at: string, gave_up_since: string | null = null) => ({
  type: 'RecordEndpointHealth' as const,
  data: { uid: 'w-1', team_uid: 't-1', ok, at, disable_after_ms: 24 * 3_600_000, gave_up_since },
});
const system = { now: '2026-01-01T00:00:00Z', actor: { type: 'system' as const, uid: 'd' }, teams: {} };

describe('outbound webhook decider', () => {
  it('team admins create; members are refused, strangers do not find the team; 20 at most', () => {
    const create = {
      type: 'CreateOutboundWebhook' as const,
      data: { uid: 'w-1', team_uid: 't-1', ...fields, secret: 's' },
    };
    endpoints
      .given([])
      .when(create)
      .then([{ type: 'OutboundWebhookCreated', data: { owner_uid: 'u-1' } }]);
    endpoints
      .given([])
      .when(create, userContext('u-2', { 't-1': 'member' }))
      .thenThrows(Forbidden);
    endpoints
      .given([])
      .when(create, userContext('u-3', { 't-2': 'admin' }))
      .thenThrows(NotFound);
    const twenty = Array.from({ length: 20 }, (_, i) => created(`w-${i}`));
    endpoints
      .given(twenty)
      .when({ ...create, data: { ...create.data, uid: 'w-21' } })
      .thenThrows(LimitExceeded);
  });

  it('marks an endpoint failing, recovered, and disables it after failing throughout the window', () => {
    const failing: OutboundWebhookEvent = {
      type: 'OutboundWebhookFailing',
      data: { uid: 'w-1', team_uid: 't-1', since: '2026-01-01T00:00:00Z' },
    };
    endpoints
      .given([created()])
      .when(health(false, '2026-01-01T00:00:00Z'), system)
      .then([{ type: 'OutboundWebhookFailing' }]);
    endpoints
      .given([created(), failing])
      .when(health(true, '2026-01-01T01:00:00Z'), system)
      .then([{ type: 'OutboundWebhookRecovered' }]);
    endpoints.given([created(), failing]).when(health(false, '2026-01-01T23:00:00Z'), system).thenNothingHappened();
    endpoints
      .given([created(), failing])
      .when(health(false, '2026-01-02T00:00:00Z'), system)
      .then([{ type: 'OutboundWebhookDisabled' }]);
    // A delivery that ran out of retries while the endpoint failed all along disables it too.
    endpoints
      .given([created(), failing])
      .when(health(false, '2026-01-01T20:00:00Z', '2026-01-01T00:00:00Z'), system)
      .then([{ type: 'OutboundWebhookDisabled' }]);
    endpoints.given([created()]).when(health(true, '2026-01-01T00:00:00Z'), system).thenNothingHappened();
  });
});

const deliveries = deciderSpec(deliveryDecider);
const scheduled: OutboundDeliveryEvent = {
  type: 'OutboundDeliveryScheduled',
  data: {
    delivery_id: 'd-1',
    webhook_uid: 'w-1',
    team_uid: 't-1',
    message_id: 'msg_1',
    event_type: 'run.queued',
    body: '{}',
    source_event_id: 'e-1',
    scheduled_at: '2026-01-01T00:00:00Z',
  },
};
const attempt = (n: number, outcome: 'delivered' | 'retry' | 'failed') => ({
  type: 'RecordAttempt' as const,
  data: {
    delivery_id: 'd-1',
    attempt: n,
    at: '2026-01-01T00:00:00Z',
    status_code: 500,
    latency_ms: 3,
    error: 'HTTP 500',
    outcome,
    next_attempt_at: null,
  },
});

describe('delivery decider', () => {
  it('schedules once and records each attempt once, in order, until settled', () => {
    deliveries.given([scheduled]).when({ type: 'ScheduleDelivery', data: scheduled.data }).thenNothingHappened();
    deliveries
      .given([scheduled])
      .when(attempt(1, 'retry'), system)
      .then([{ type: 'OutboundDeliveryAttempted', data: { attempt: 1, webhook_uid: 'w-1' } }]);
    deliveries.given([scheduled]).when(attempt(2, 'retry'), system).thenNothingHappened();
    const delivered = {
      type: 'OutboundDeliveryAttempted' as const,
      data: { ...attempt(1, 'delivered').data, webhook_uid: 'w-1', team_uid: 't-1' },
    };
    deliveries.given([scheduled, delivered]).when(attempt(2, 'retry'), system).thenNothingHappened();
    deliveries
      .given([scheduled, delivered])
      .when({ type: 'AbandonDelivery', data: { delivery_id: 'd-1', reason: 'x' } }, system)
      .thenNothingHappened();
    deliveries
      .given([scheduled])
      .when({ type: 'AbandonDelivery', data: { delivery_id: 'd-1', reason: 'x' } }, system)
      .then([{ type: 'OutboundDeliveryAbandoned' }]);
  });
});
