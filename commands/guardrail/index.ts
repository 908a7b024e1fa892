/** Guardrails (issue #33): budgets that refuse before they spend, limits, stuck runs and approvals. */
import { feature } from '../../src/feature.js';
import approvalRoutes from './approval-routes.js';
import budgetRoutes from './budget-routes.js';
import limitsRoutes from './limits-routes.js';
import { budgetReactor } from './budget-reactor.js';
import { guardrailStreamEvents } from './stream-events.js';
import { startGuardrailSweeper } from './sweeper.js';
import { watchedRunsProjection } from '../../projections/guardrail/watched-runs.js';

export const guardrailFeature = feature({
  name: 'guardrail',
  routes: [budgetRoutes, limitsRoutes, approvalRoutes],
  projections: [watchedRunsProjection],
  reactors: [budgetReactor],
  services: [startGuardrailSweeper],
  streamEvents: [guardrailStreamEvents],
});
