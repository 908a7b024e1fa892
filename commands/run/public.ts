/**
 * The run feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { ATTACHMENT_BODY_LIMIT, prepareAttachment, preparedAttachment } from './attachments.js';
export { createRun, joinConversation } from './create.js';
export { sendFollowup } from './followup.js';
export { type RunCommand, runDecider, type RunDeciderState, type RunView } from './run-decider.js';
export {
  artifactItemSchema,
  canView,
  filenameOf,
  isoDuration,
  isTerminal,
  mimeOf,
  requestUsageOf,
  requestUsageSchema,
  runItem,
  runParams,
  runStateSchema,
  toRunItem,
  viewerOf,
} from './resource.js';
export { canReadRun, ownerOfRun, readableRunsFilter, readableRunsIn } from './run-access.js';
export { agentConfigSchema, attachmentSchema, MAX_ATTACHMENTS, metadataSchema, runModeSchema } from './schema.js';
export { runState } from './run-state.js';
export { artifactsProjection } from '../../projections/run/artifacts.js';
export { type RunDoc, runsProjection } from '../../projections/run/runs.js';
export { timelineEntrySchema } from './run-detail-events.js';
export { runStateEvents } from './stream-events.js';
export { runApprovalEvents } from './approval-stream-events.js';
