/**
 * The scorer feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { scorerDecider } from './scorer-decider.js';
export { readScorerFile } from './file-form.js';
export { inScope } from './scorer-reactor.js';
export { scorerParams } from './request-schemas.js';
export {
  outcomeOf,
  scorerListItem,
  scorerResource,
  scoringResult,
  toScorerResource,
  toScoringResult,
} from './resource.js';
export { scoringDecider } from './scoring-decider.js';
export { scorersProjection } from '../../projections/scorer/scorers.js';
