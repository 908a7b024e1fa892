/** Factory branches: proposed definitions, reviewed and applied as versions of the factory's definition. */
import { feature } from '../../src/feature.js';
import { branchesProjection } from '../../projections/branch/branches.js';
import { factoryDefinitionsProjection } from '../../projections/branch/factory-definitions.js';
import branchQueries from '../../queries/branch/branches.js';
import definitionQueries from '../../queries/branch/factory-definitions.js';
import { carryOutPending, pendingSweeper } from './definition-carry-out.js';
import branchRoutes from './routes.js';

export const branchFeature = feature({
  name: 'branch',
  routes: [branchRoutes, branchQueries, definitionQueries],
  projections: [branchesProjection, factoryDefinitionsProjection],
  /** A version a killed process left half carried out is carried out whole before anything is served. */
  start: carryOutPending,
  services: [pendingSweeper],
});
