/**
 * The analytics feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { priceReported } from './analytics-reactor.js';
export {
  COST_GROUPS,
  costBreakdownResource,
  costBySizeResource,
  costPerPrResource,
  type Dollars,
  factoryScope,
  metricsResource,
  PR_SIZES,
  pullRequestResource,
  RUN_GROUPS,
  runBreakdownResource,
  topPrResource,
  toPullRequestRecord,
} from './resource.js';
