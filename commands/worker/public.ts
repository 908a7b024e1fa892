/**
 * The worker feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { workerPrincipal } from './principal.js';
export { executionHeader, runParams } from './schema.js';
export { liveWorkerCount } from './presence-store.js';
