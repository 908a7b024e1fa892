/**
 * What one delivery attempt writes: its entry in the webhook's delivery log (a rejection, or the
 * reservation of its identity: Accepted or Duplicate). Rejections of senders not authenticated
 * past the failed-authentication budget are counted instead of logged (strangers.ts); before the
 * webhook's next entry of any kind, those counts are logged as one entry per reason, so the log
 * says how many there were, in order, without an event for each.
 */
import type { FastifyRequest } from 'fastify';
import type { EventMetadata } from '../../../src/eventstore/port.js';
import { timeOrderedId } from '../../../src/ids.js';
import type { Runtime } from '../../../src/runtime.js';
import type { WebhookState } from '../webhooks-decider.js';
import { type DeliveryEvent, type DeliveryRejectionReason, rejectedDeliveriesStream } from '../events.js';
import type { RateLimiter } from './rate-limit.js';
import { countDelivery } from './metrics.js';

/** Rejections a sender not yet authenticated can cause: counted past the budget. */
export const STRANGER_REASONS = ['auth', 'too_large'] as const satisfies readonly DeliveryRejectionReason[];

export type Attempt = ReturnType<typeof attemptOf>;

export function attemptOf(
  rt: Runtime,
  req: FastifyRequest,
  webhook: WebhookState,
  failedAuth: RateLimiter,
  at: { delivery_id: string; received_at: Date },
) {
  const uid = webhook.uid;
  const base = {
    webhook_uid: uid,
    factory_uid: webhook.factory_uid,
    team_uid: webhook.team_uid,
    delivery_id: at.delivery_id,
    received_at: at.received_at.toISOString(),
  };
  const metadataOf = (deliveryId: string): EventMetadata => ({
    actor: { type: 'system', uid: `webhook:${uid}` },
    team_uid: webhook.team_uid,
    correlation_id: deliveryId,
    causation_id: null,
    request_id: req.id,
    occurred_at: base.received_at,
  });
  const append = (stream: string, event: DeliveryEvent, expected: 'any' | 'no_stream') =>
    rt.events.append(
      stream,
      [{ id: timeOrderedId(), type: event.type, data: event.data, metadata: metadataOf(event.data.delivery_id) }],
      expected,
    );

  /** The rejections counted since the webhook's last entry, one entry per reason, just before this one. */
  async function logCounted(): Promise<void> {
    const counted = await failedAuth.takeCounted(uid, STRANGER_REASONS);
    for (const c of counted.sort((a, b) => a.last_ms - b.last_ms)) {
      // Received before this attempt, so listed after it (newest first) even within one millisecond.
      const last = Math.min(c.last_ms, at.received_at.getTime() - 1);
      const data = {
        ...base,
        delivery_id: timeOrderedId(),
        received_at: new Date(last).toISOString(),
        size_bytes: c.total,
        reason: c.counter as DeliveryRejectionReason,
        count: c.count,
      };
      await append(rejectedDeliveriesStream(uid), { type: 'DeliveryRejected', data }, 'any');
    }
  }

  /** Writes the attempt's event, once the counts before it are logged; returns once the log shows it. */
  async function write(stream: string, event: DeliveryEvent, expected: 'any' | 'no_stream'): Promise<void> {
    await logCounted();
    const { position } = await append(stream, event, expected);
    countDelivery(
      rt,
      event.type === 'DeliveryAccepted'
        ? 'accepted'
        : event.type === 'DeliveryDuplicated'
          ? 'duplicate'
          : `rejected_${event.data.reason}`,
    );
    await rt.projector.waitFor(position);
  }

  return {
    base,
    write,
    reject: (reason: DeliveryRejectionReason, size_bytes: number) =>
      write(rejectedDeliveriesStream(uid), { type: 'DeliveryRejected', data: { ...base, size_bytes, reason } }, 'any'),
  };
}
