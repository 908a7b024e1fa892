/** An automation run's refusal: one event on the run id's own stream, written once. */
import type { Decider } from '../../src/kernel/decider.js';
import type { AutomationRunRefused } from './events.js';

export type RefusalCommand = { type: 'RefuseAutomationRun'; data: AutomationRunRefused['data'] };

export const runRefusalDecider: Decider<RefusalCommand, AutomationRunRefused, { refused: boolean }> = {
  initialState: () => ({ refused: false }),
  evolve: () => ({ refused: true }),
  // Only the automation reactors send it (no route does): a second refusal of one run is a replay.
  decide: (command, state) => (state.refused ? [] : [{ type: 'AutomationRunRefused', data: command.data }]),
};
