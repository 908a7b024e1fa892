/** The composition root of the HTTP API: every command and query module, in one list. */
import type { AppModules } from './http/app.js';
import factoryRoutes from '../commands/factory/routes.js';
import identityRoutes from '../commands/identity/routes.js';
import teamRoutes from '../commands/team/routes.js';
import factoryQueries from '../queries/factories.js';
import identityQueries from '../queries/identities.js';
import networkingQueries from '../queries/networking.js';
import { principalResolver } from '../queries/principals.js';
import teamQueries from '../queries/teams.js';
import type { Runtime } from './runtime.js';

const routeModules = [teamRoutes, teamQueries, identityRoutes, identityQueries, factoryRoutes, factoryQueries, networkingQueries];

export const apiModules = (rt: Runtime): AppModules => ({
  resolvePrincipal: principalResolver(rt),
  routes: (api) => {
    for (const register of routeModules) register(api, rt);
  },
});
