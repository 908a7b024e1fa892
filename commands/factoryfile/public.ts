/**
 * The factoryfile feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export {
  type AgentSpec,
  type AutomationSpec,
  canonicalJson,
  type Definition,
  type FactorySpec,
  RESOURCE_KINDS,
  resourceHashes,
  type ResourceKind,
  type RunnerSpec,
  sha256,
  type StateReference,
} from './definition.js';
export { diagnostic, type Diagnostic } from './diagnostics.js';
export { FILES_BODY_LIMIT, filesSchema } from './files.js';
export { diagnosticSchema } from './resource.js';
export { type FactoryFile, validateFiles } from './validate.js';
