/** A counter whose every event records the count its decision was made on: races show as gaps or repeats. */
import type { Decider } from '../../src/kernel/decider.js';

export type Increment = { type: 'Increment'; data: { by: string } };
export type Incremented = { type: 'Incremented'; data: { expected_previous_count: number; by: string } };

export const counter: Decider<Increment, Incremented, { count: number }> = {
  initialState: () => ({ count: 0 }),
  evolve: (state) => ({ count: state.count + 1 }),
  decide: (command, state) => [
    { type: 'Incremented', data: { expected_previous_count: state.count, by: command.data.by } },
  ],
};
