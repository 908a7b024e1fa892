/** The write-side model: one decider per aggregate, three pure functions. */
import type { NewEvent } from '../eventstore/port.js';

export type Actor = { type: 'user' | 'agent' | 'system'; uid: string };

/** Everything a decision may depend on besides the command and the state: no I/O, no clock. */
export interface DecideContext {
  now: string;
  actor: Actor;
  /** The actor's teams and its role in each (empty for the system). */
  teams: Readonly<Record<string, 'admin' | 'member'>>;
}

export interface Decider<C, E extends NewEvent, S> {
  initialState(): S;
  evolve(state: S, event: E): S;
  /** Returns the events that record the decision ([] for a valid no-op) or throws a DomainError. */
  decide(command: C, state: S, context: DecideContext): E[];
}
