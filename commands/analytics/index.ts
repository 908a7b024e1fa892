/**
 * Analytics: usage priced into a cost ledger per run tree, pull-request facts from the factory's
 * GitHub webhooks, and the metrics, cost and pull-request operations over rollup read models.
 */
import { feature } from '../../src/feature.js';
import { factoryRollupsProjection } from '../../projections/analytics/factory-rollups.js';
import { pullRequestsProjection } from '../../projections/analytics/pull-requests.js';
import costQueries from '../../queries/analytics/costs.js';
import metricsQueries from '../../queries/analytics/metrics.js';
import pullRequestQueries from '../../queries/analytics/pull-requests.js';
import { costLedgerReactor, pullRequestFactsReactor } from './analytics-reactor.js';

export const analyticsFeature = feature({
  name: 'analytics',
  routes: [metricsQueries, costQueries, pullRequestQueries],
  projections: [factoryRollupsProjection, pullRequestsProjection],
  reactors: [costLedgerReactor, pullRequestFactsReactor],
});
