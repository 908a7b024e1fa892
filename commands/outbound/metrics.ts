/** The outbound dispatcher's metrics: attempts by outcome, and endpoints the server disabled. */
import type { Runtime } from '../../src/runtime.js';

export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'abandoned';

export const countOutboundAttempt = (rt: Runtime, outcome: AttemptOutcome): void =>
  rt.metrics
    .counter({
      name: 'shopfloor_outbound_deliveries_total',
      help: 'Outbound webhook delivery attempts by outcome (delivered, retry, failed: given up, abandoned: endpoint disabled or deleted)',
      labelNames: ['outcome'],
    })
    .inc({ outcome });

export const countEndpointDisabled = (rt: Runtime): void =>
  rt.metrics
    .counter({
      name: 'shopfloor_outbound_endpoints_disabled_total',
      help: 'Outbound webhook endpoints the server disabled after failing every attempt for OUTBOUND_DISABLE_AFTER_HOURS',
    })
    .inc();
