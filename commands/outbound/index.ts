/** Outbound webhooks: the team's own systems hear of runs, tasks, the inbox and rejected deliveries. */
import { feature } from '../../src/feature.js';
import { outboundDeliveriesProjection } from '../../projections/outbound/outbound-deliveries.js';
import { outboundWebhooksProjection } from '../../projections/outbound/outbound-webhooks.js';
import outboundWebhookQueries from '../../queries/outbound/outbound-webhooks.js';
import { startDispatcher } from './dispatcher.js';
import { outboundReactor } from './outbound-reactor.js';
import outboundWebhookRoutes from './routes.js';

export const outboundWebhookFeature = feature({
  name: 'outbound',
  routes: [outboundWebhookRoutes, outboundWebhookQueries],
  projections: [outboundWebhooksProjection, outboundDeliveriesProjection],
  reactors: [outboundReactor],
  services: [startDispatcher],
});
