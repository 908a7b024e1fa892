/** Cloud environments: the images, repositories and setup that runs execute in. */
import { feature } from '../../src/feature.js';
import { environmentsProjection } from '../../projections/environments.js';
import environmentQueries from '../../queries/environments.js';
import environmentRoutes from './routes.js';

export const environmentFeature = feature({
  name: 'environment',
  routes: [environmentRoutes, environmentQueries],
  projections: [environmentsProjection],
});
