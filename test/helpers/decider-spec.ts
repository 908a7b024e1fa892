/**
 * Given events, when a command, then events (or an error): the way every decider is tested.
 * Expected events match partially, so a test names only the fields its rule is about.
 */
import { expect } from 'vitest';
import type { NewEvent } from '../../src/eventstore/port.js';
import type { Decider, DecideContext } from '../../src/kernel/decider.js';

/** The state a decider's events leave. */
export const fold = <E extends NewEvent, S>(
  decider: Pick<Decider<unknown, E, S>, 'initialState' | 'evolve'>,
  events: readonly E[],
): S => events.reduce(decider.evolve, decider.initialState());

export const userContext = (uid = 'u-1', teams: DecideContext['teams'] = { 't-1': 'admin' }): DecideContext => ({
  now: '2026-01-01T00:00:00.000Z',
  actor: { type: 'user', uid },
  teams,
});

export function deciderSpec<C, E extends NewEvent, S>(decider: Decider<C, E, S>) {
  return {
    given: (events: E[]) => ({
      when: (command: C, context: DecideContext = userContext()) => {
        const run = () => decider.decide(command, fold(decider, events), context);
        return {
          // biome-ignore lint/suspicious/noThenProperty: given/when/then reads as the rule it checks; nothing awaits it
          then(expected: Array<{ type: E['type']; data?: Partial<E['data']> }>) {
            const actual = run();
            expect(actual).toHaveLength(expected.length);
            for (const [i, e] of expected.entries()) expect(actual[i]).toMatchObject(e);
          },
          thenNothingHappened() {
            expect(run()).toEqual([]);
          },
          // biome-ignore lint/suspicious/noExplicitAny: any error class
          thenThrows(error: new (...args: any[]) => Error, message?: RegExp) {
            expect(run).toThrow(error);
            if (message) expect(run).toThrow(message);
          },
        };
      },
    }),
  };
}
