/** Custom webhooks: their management, the public ingress and the delivery log. */
import { webhookStreamEvents } from './stream-events.js';
import { feature } from '../../src/feature.js';
import { webhookDeliveriesProjection } from '../../projections/webhook/webhook-deliveries.js';
import { webhooksProjection } from '../../projections/webhook/webhooks.js';
import webhookQueries from '../../queries/webhook/webhooks.js';
import webhookIngress from './ingress/ingress.js';
import { BUDGETS } from './ingress/rate-limit.js';
import webhookRoutes from './routes.js';

export const webhookFeature = feature({
  name: 'webhook',
  streamEvents: [webhookStreamEvents],
  routes: [webhookRoutes, webhookQueries],
  rootRoutes: [webhookIngress],
  projections: [webhooksProjection, webhookDeliveriesProjection],
  // The ingress's budgets, shared by the processes of the store.
  start: (rt) => rt.docs.ensureCollection(BUDGETS, []),
});
