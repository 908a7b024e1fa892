/**
 * The user feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { apiKeyBody, issuedKeyAnswer, newKeyGrant } from './api-keys.js';
export { userDecider } from './user-decider.js';
export { newInvitation } from './invitation.js';
export { assertCanIssue, evolveKeys, type LiveKeys } from './keys.js';
export { findOrRegisterUser, ownerOf, reserveEmail } from './register.js';
export { apiKeyList, issuedApiKey, keyIdParam, toApiKeyResource } from './resource.js';
export { usersProjection } from '../../projections/user/users.js';
