/** Automations: prompts that start factory runs when a webhook delivery matches their filter. */
import { feature } from '../../src/feature.js';
import { automationsProjection } from '../../projections/automation/automations.js';
import automationQueries from '../../queries/automation/automations.js';
import automationDeliveryRoutes from './deliveries.js';
import { automationRunsReactor } from './automation-runs-reactor.js';
import automationRoutes from './routes.js';
import { automationSchedulesReactor, scheduledAutomationRunsReactor } from './scheduled-automation-reactor.js';

export const automationFeature = feature({
  name: 'automation',
  routes: [automationRoutes, automationQueries, automationDeliveryRoutes],
  projections: [automationsProjection],
  reactors: [automationRunsReactor, automationSchedulesReactor, scheduledAutomationRunsReactor],
});
