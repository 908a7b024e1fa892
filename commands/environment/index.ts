/** Cloud environments: the images, repositories and setup that runs execute in. */
import { feature } from '../../src/feature.js';
import { environmentsProjection } from '../../projections/environment/environments.js';
import environmentQueries from '../../queries/environment/environments.js';
import environmentRoutes from './routes.js';

export const environmentFeature = feature({
  name: 'environment',
  routes: [environmentRoutes, environmentQueries],
  projections: [environmentsProjection],
});
