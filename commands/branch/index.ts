/** Factory branches: proposed definitions, reviewed and applied as versions of the factory's definition. */
import { feature } from '../../src/feature.js';
import { branchesProjection } from '../../projections/branches.js';
import { factoryDefinitionsProjection } from '../../projections/factory-definitions.js';
import branchQueries from '../../queries/branches.js';
import definitionQueries from '../../queries/factory-definitions.js';
import { carryOutPending, pendingSweeper } from './carry-out.js';
import branchRoutes from './routes.js';

export const branchFeature = feature({
  name: 'branch',
  routes: [branchRoutes, branchQueries, definitionQueries],
  projections: [branchesProjection, factoryDefinitionsProjection],
  /** A version a killed process left half carried out is carried out whole before anything is served. */
  start: carryOutPending,
  services: [pendingSweeper],
});
