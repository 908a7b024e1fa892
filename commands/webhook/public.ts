/**
 * The webhook feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { MAX_WEBHOOKS_PER_FACTORY, webhooksDecider, type WebhookState } from './webhooks-decider.js';
export { webhookState } from './ingress/webhook-state.js';
export {
  factoryWebhooksParams,
  toWebhookResource,
  visibleWebhook,
  webhookParams,
  webhookResource,
} from './resource.js';
export { assertUsableSecret, deliveryIdHeaderError } from './secrets.js';
export { webhooksProjection } from '../../projections/webhook/webhooks.js';
export { webhookStreamEvents } from './stream-events.js';
