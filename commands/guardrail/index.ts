/** Guardrails (issue #33): budgets that refuse before they spend, limits, stuck runs and approvals. */
import { feature } from '../../src/feature.js';
import budgetRoutes from './budget-routes.js';
import { budgetReactor } from './budget-reactor.js';

export const guardrailFeature = feature({
  name: 'guardrail',
  routes: [budgetRoutes],
  reactors: [budgetReactor],
});
