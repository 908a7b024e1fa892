/**
 * The automation feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { automationsDecider } from './automations-decider.js';
export {
  automationOf,
  automationParams,
  automationResource,
  MAX_AUTOMATIONS_PER_FACTORY,
  toAutomationResource,
} from './resource.js';
export { normalizeTrigger, triggerErrors, type TriggerRequest } from './triggers.js';
export { automationsProjection } from '../../projections/automation/automations.js';
