/**
 * The inbox feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { type InboxItem, inboxListQuery, inboxPage, inboxRoutesAnswer, routesParams, toInboxItem } from './resource.js';
export { inboxStreamEvents } from './stream-events.js';
