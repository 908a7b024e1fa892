/** Agent identities: the named agents of a team, their API keys and factory roles. */
import { feature } from '../../src/feature.js';
import { identitiesProjection } from '../../projections/identity/identities.js';
import identityQueries from '../../queries/identity/identities.js';
import identityRoutes from './routes.js';

export const identityFeature = feature({
  name: 'identity',
  routes: [identityRoutes, identityQueries],
  projections: [identitiesProjection],
});
