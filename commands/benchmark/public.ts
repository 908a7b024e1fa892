/**
 * The benchmark feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { factoryParams, runParams, suiteParams, taskParams } from './request-schemas.js';
export { resultsOf, resultsResource } from './results-resource.js';
export { RUN_INCLUDES, type RunInclude, runResource, runsPage, toRunResource } from './run-resource.js';
export { suitesPage, suiteWithTasks, taskResource, toSuiteResource, toTaskResource } from './suite-resource.js';
export { toTrialResource, trialResource, trialsPage } from './trial-resource.js';
