/** Factory files: the schema documents of a definition's files, their validation, and the `shopfloor factory` commands. */
import { feature } from '../../src/feature.js';
import { factoryCommand } from './cli.js';
import factoryFileRoutes from './routes.js';

export const factoryFileFeature = feature({
  name: 'factoryfile',
  routes: [factoryFileRoutes],
  cli: [factoryCommand],
});
