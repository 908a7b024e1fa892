/**
 * The schedule feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { cronProblem } from './cron.js';
export { scheduleDecider } from './schedule-decider.js';
export { recurrenceProblem } from './recurrence.js';
export { canSeeSchedule, scheduleAnswers, scheduleParams, scheduleResource } from './resource.js';
export { schedulesProjection } from '../../projections/schedule/schedules.js';
