/**
 * The environment feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { assertUsableEnvironment, environmentDecider } from './environment-decider.js';
export { environmentParams, environmentResource } from './resource.js';
export { type EnvironmentDoc, environmentsProjection } from '../../projections/environment/environments.js';
