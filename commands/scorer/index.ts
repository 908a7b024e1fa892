/**
 * Scorers: versioned rubrics that judge the finished runs of a factory's agents, with judge runs
 * executed by the team's workers, live scores, pass rates, manual dispatch and self-improvement.
 */
import { scorerStreamEvents } from './stream-events.js';
import { feature } from '../../src/feature.js';
import { scorersProjection } from '../../projections/scorer/scorers.js';
import { scoringResultsProjection } from '../../projections/scorer/scoring-results.js';
import { scoringRollupsProjection } from '../../projections/scorer/scoring-rollups.js';
import scorerMetricsQueries from '../../queries/scorer/scorer-metrics.js';
import runScoreQueries from '../../queries/scorer/run-scores.js';
import scorerHistoryQueries from '../../queries/scorer/scorer-history.js';
import scorerResultQueries from '../../queries/scorer/scorer-results.js';
import scorerQueries from '../../queries/scorer/scorers.js';
import { startSelfImprovementCheck } from './improvement-check.js';
import {
  judgeRunsReactor,
  scorerKeysReactor,
  scoringTriggersReactor,
  selfImprovementRunsReactor,
} from './scorer-reactor.js';
import dispatchRoutes from './dispatch-routes.js';
import judgementRoutes from './judgement-routes.js';
import scorerRoutes from './scorer-routes.js';
import selfImprovementRoutes from './self-improvement-routes.js';

export const scorerFeature = feature({
  name: 'scorer',
  streamEvents: [scorerStreamEvents],
  routes: [
    scorerRoutes,
    dispatchRoutes,
    selfImprovementRoutes,
    judgementRoutes,
    scorerQueries,
    scorerHistoryQueries,
    scorerResultQueries,
    runScoreQueries,
    scorerMetricsQueries,
  ],
  projections: [scorersProjection, scoringResultsProjection, scoringRollupsProjection],
  reactors: [scoringTriggersReactor, judgeRunsReactor, selfImprovementRunsReactor, scorerKeysReactor],
  services: [startSelfImprovementCheck],
});
