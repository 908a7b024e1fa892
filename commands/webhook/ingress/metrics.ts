/** `shopfloor_webhook_deliveries_total{outcome}`: what became of each delivery attempt at the ingress. */
import type { Runtime } from '../../../src/runtime.js';
import type { DeliveryRejectionReason } from '../events.js';

export type DeliveryOutcome = 'accepted' | 'duplicate' | `rejected_${DeliveryRejectionReason}`;

/** The counter (declared when the ingress starts, so that it is scraped before the first delivery). */
export const deliveriesCounter = (rt: Runtime) =>
  rt.metrics.counter({
    name: 'shopfloor_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (accepted, duplicate, rejected_auth, rejected_invalid_json, rejected_too_large), counted ones included',
    labelNames: ['outcome'],
  });

export const countDelivery = (rt: Runtime, outcome: DeliveryOutcome): void => {
  deliveriesCounter(rt).inc({ outcome });
};
