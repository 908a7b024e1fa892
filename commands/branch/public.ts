/**
 * The branch feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export {
  assertBranchesEnabled,
  branchParams,
  branchStatus,
  branchStatusOf,
  definitionResource,
  definitionVersion,
  toDefinitionResource,
  toDefinitionVersion,
  visibleBranch,
} from './resource.js';
