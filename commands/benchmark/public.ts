/**
 * The benchmark feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export {
  factoryParams,
  resultsOf,
  resultsResource,
  RUN_INCLUDES,
  type RunInclude,
  runParams,
  runResource,
  runsPage,
  suiteParams,
  suitesPage,
  suiteWithTasks,
  taskParams,
  taskResource,
  toRunResource,
  toSuiteResource,
  toTaskResource,
  toTrialResource,
  trialResource,
  trialsPage,
} from './resource.js';
