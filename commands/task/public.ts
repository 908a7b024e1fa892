/**
 * The task feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { taskState } from './create.js';
export type { LiveTask } from './task-decider.js';
export { foremanOf } from './dispatch.js';
export { taskDetail, taskFactoryParams, taskListItem, taskParams, taskResource } from './resource.js';
export { taskStreamEvents } from './stream-events.js';
