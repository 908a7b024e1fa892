/**
 * The identity feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { identityDecider } from './identity-decider.js';
export { identityParams, identityResource, toIdentityResource } from './resource.js';
export { identitiesProjection, type IdentityDoc } from '../../projections/identity/identities.js';
