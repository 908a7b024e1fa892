/**
 * The guardrail feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { releaseBudgets, reserveBudgets } from './budget-guard.js';
export { fairOrder, freeSlots, takeSlots } from './slot-guard.js';
export { approvalFor } from './approval-guard.js';
export {
  approvalNotice,
  budgetNotices,
  type GuardrailSource,
  runNoticePlace,
} from './notices.js';
export { guardrailStreamEvents } from './stream-events.js';
