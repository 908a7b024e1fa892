/** Every reactor the server runs: reactions of the write side to its own events. */
import type { AnyReactor } from './projector/reactor.js';
import type { Runtime } from './runtime.js';
import { automationRunsReactor } from '../commands/automation/reactor.js';
import { dispatchedTaskReactor, taskCancelReactor } from '../commands/task/reactors.js';

export const reactors: ReadonlyArray<AnyReactor<Runtime>> = [
  dispatchedTaskReactor,
  taskCancelReactor,
  automationRunsReactor,
];
