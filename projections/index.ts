/** Every read model the projector keeps. */
import type { AnyProjection } from '../src/projector/projection.js';
import { apiKeysProjection } from './api-keys.js';
import { factoriesProjection } from './factories.js';
import { identitiesProjection } from './identities.js';
import { runsProjection } from './runs.js';
import { teamsProjection } from './teams.js';
import { usersProjection } from './users.js';

export const projections: readonly AnyProjection[] = [
  apiKeysProjection,
  usersProjection,
  teamsProjection,
  identitiesProjection,
  factoriesProjection,
  runsProjection,
];
