/** The outbound dispatcher's metrics: attempts by outcome, and endpoints the server disabled. */
import type { Runtime } from '../../src/runtime.js';

export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'abandoned';

const attempts = (rt: Runtime) =>
  rt.metrics.counter({
    name: 'shopfloor_outbound_deliveries_total',
    help: 'Outbound webhook delivery attempts by outcome (delivered, retry, failed: given up, abandoned: endpoint disabled or deleted)',
    labelNames: ['outcome'],
  });

const disabled = (rt: Runtime) =>
  rt.metrics.counter({
    name: 'shopfloor_outbound_endpoints_disabled_total',
    help: 'Outbound webhook endpoints the server disabled after failing every attempt for OUTBOUND_DISABLE_AFTER_HOURS',
  });

/** Declared when the dispatcher starts, so that they are scraped before the first delivery. */
export const declareOutboundMetrics = (rt: Runtime): void => {
  attempts(rt);
  disabled(rt);
};

export const countOutboundAttempt = (rt: Runtime, outcome: AttemptOutcome): void => {
  attempts(rt).inc({ outcome });
};

export const countEndpointDisabled = (rt: Runtime): void => {
  disabled(rt).inc();
};
