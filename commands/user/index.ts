/** People's accounts and API keys: invitations redeemed, keys issued, listed and revoked, and the principal a key opens. */
import { feature } from '../../src/feature.js';
import { apiKeysProjection } from '../../projections/user/api-keys.js';
import { usersProjection } from '../../projections/user/users.js';
import { agentKeyQueries, userKeyQueries } from '../../queries/user/api-keys.js';
import { principalSource } from '../../queries/user/principals.js';
import userKeyRoutes from './api-keys.js';
import invitationRoutes from './invitation.js';

export const userFeature = feature({
  name: 'user',
  routes: [invitationRoutes, userKeyRoutes, userKeyQueries, agentKeyQueries],
  projections: [apiKeysProjection, usersProjection],
  principals: principalSource,
});
