/** The composition root of the HTTP API: every command and query module, in one list. */
import type { AppModules } from './http/app.js';
import conversationRoutes from '../commands/conversation/routes.js';
import factoryRoutes from '../commands/factory/routes.js';
import identityRoutes from '../commands/identity/routes.js';
import runAttachmentRoutes from '../commands/run/attachments.js';
import runRoutes from '../commands/run/routes.js';
import taskRoutes from '../commands/task/routes.js';
import teamRoutes from '../commands/team/routes.js';
import workerRoutes from '../commands/worker/routes.js';
import artifactQueries from '../queries/artifacts.js';
import blobQueries from '../queries/blobs.js';
import conversationQueries from '../queries/conversations.js';
import factoryQueries from '../queries/factories.js';
import historyQueries from '../queries/history.js';
import identityQueries from '../queries/identities.js';
import networkingQueries from '../queries/networking.js';
import { principalResolver } from '../queries/principals.js';
import runQueries from '../queries/runs.js';
import taskQueries from '../queries/tasks.js';
import teamQueries from '../queries/teams.js';
import workerQueries from '../queries/workers.js';
import automationRoutes from '../commands/automation/routes.js';
import automationDeliveryRoutes from '../commands/automation/deliveries.js';
import automationQueries from '../queries/automations.js';
import webhookRoutes from '../commands/webhook/routes.js';
import webhookQueries from '../queries/webhooks.js';
import teamSecretRoutes from '../commands/secret/routes.js';
import webhookIngress from './webhooks/ingress.js';
import type { Runtime } from './runtime.js';

const routeModules = [teamRoutes, teamQueries, identityRoutes, identityQueries, factoryRoutes, factoryQueries, networkingQueries, conversationRoutes, runAttachmentRoutes, runRoutes, runQueries, conversationQueries, artifactQueries, historyQueries, taskRoutes, taskQueries, workerRoutes, workerQueries, blobQueries, automationRoutes, automationQueries, automationDeliveryRoutes, webhookRoutes, webhookQueries, teamSecretRoutes];

export const apiModules = (rt: Runtime): AppModules => ({
  resolvePrincipal: principalResolver(rt),
  routes: (api) => {
    for (const register of routeModules) register(api, rt);
  },
  rootRoutes: (app) => webhookIngress(app, rt),
});
