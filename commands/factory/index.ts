/** Factories, the team workspaces that receive work, and the egress ranges their agents use. */
import { feature } from '../../src/feature.js';
import { factoriesProjection } from '../../projections/factory/factories.js';
import factoryQueries from '../../queries/factory/factories.js';
import networkingQueries from '../../queries/factory/networking.js';
import factoryRoutes from './routes.js';

export const factoryFeature = feature({
  name: 'factory',
  routes: [factoryRoutes, factoryQueries, networkingQueries],
  projections: [factoriesProjection],
});
