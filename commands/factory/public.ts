/**
 * The factory feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { factoryDecider } from './factory-decider.js';
export { liveFactory, type LiveFactory } from './live-factory.js';
export { factoryParams, factoryResource, toFactoryResource, visibleFactory } from './resource.js';
export { factoriesProjection, type FactoryDoc } from '../../projections/factory/factories.js';
