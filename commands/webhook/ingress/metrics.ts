/** `shopfloor_webhook_deliveries_total{outcome}`: what became of each delivery attempt at the ingress. */
import type { Runtime } from '../../../src/runtime.js';
import type { DeliveryRejectionReason } from '../events.js';

export type DeliveryOutcome = 'accepted' | 'duplicate' | `rejected_${DeliveryRejectionReason}`;

export const countDelivery = (rt: Runtime, outcome: DeliveryOutcome): void =>
  rt.metrics
    .counter({
      name: 'shopfloor_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (accepted, duplicate, rejected_auth, rejected_invalid_json, rejected_too_large), counted ones included',
      labelNames: ['outcome'],
    })
    .inc({ outcome });
