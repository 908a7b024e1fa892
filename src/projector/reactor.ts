/**
 * Reactors: subscriptions that turn events into commands (dispatch creates a task, a cancelled
 * task cancels its run tree). Each has its own checkpoint; delivery is at least once, so every
 * command a reactor sends carries ids derived from the causing event and is safe to repeat.
 * Each runs in one process of a store at a time (its lease, `reactor_<name>`), its checkpoint
 * commits fenced by the lease (projector/reactor-run). The events a reaction appends record the
 * reactor and their cause (`metadata.reaction`), so a reactor whose checkpoint is gone (a fresh
 * read store) knows from the log alone how far it had come (its `replay` rule).
 */
import { v5 as uuidv5 } from 'uuid';
import type { NewEvent, Reaction, RecordedEvent } from '../eventstore/port.js';
import type { CommandContext } from '../kernel/handle.js';

const NAMESPACE = '6f1d8a52-3c4e-4f0b-9a57-2b8e1c9d7e10';

/**
 * The reaction each event handed to a reactor stands for, by the event object the reactor was
 * given: a copy of its own for each reaction, so a request doing the same work early (with an
 * event object of its own) records none. Not an AsyncLocalStorage: on Node 20 one turns on the
 * promise hooks for every promise of the process, each request's included.
 */
const reactions = new WeakMap<RecordedEvent, Reaction>();

/** Runs `reaction` to `event` as reactor `name`: the commands it sends with the event it is given record so. */
export function asReactor<T>(
  name: string,
  event: RecordedEvent,
  reaction: (own: RecordedEvent) => Promise<T>,
): Promise<T> {
  const own = { ...event };
  const { commit, prepare } = event.position;
  reactions.set(own, { reactor: name, commit: commit.toString(), prepare: prepare.toString() });
  return reaction(own);
}

/** A stable id for the `purpose` of reacting to `event`: the same on every replay. */
export const derivedId = (event: Pick<RecordedEvent, 'id'>, purpose: string) =>
  uuidv5(`${event.id}:${purpose}`, NAMESPACE);

/** The context of commands sent because of `event`: by the system, caused by it. */
export function reactionContext(event: RecordedEvent, now: Date): CommandContext {
  const reaction = reactions.get(event);
  return {
    now: now.toISOString(),
    actor: { type: 'system', uid: 'reactor' },
    teams: {},
    team_uid: event.metadata.team_uid,
    correlation_id: event.metadata.correlation_id,
    causation_id: event.id,
    request_id: null,
    ...(reaction ? { reaction } : {}),
  };
}

type Handler<E extends NewEvent, Deps> = (event: RecordedEvent<E>, deps: Deps) => Promise<void>;

/**
 * What the reactor does with the stored log when it has no checkpoint (a fresh read store); the
 * table of every reactor's rule and why is in docs/architecture.md.
 * - `after-last-effect`: its effects are events in the log, so every event before the cause of
 *   its newest effect was reacted to: it starts at that cause (reacted to again: safe) and the
 *   older log is skipped unread.
 * - `all`: reacts to every stored event of its types again (its effects are outside the log,
 *   and repeating them is harmless).
 */
type ReplayRule = 'after-last-effect' | 'all';

export interface Reactor<E extends NewEvent = NewEvent, Deps = unknown> {
  name: string;
  replay: ReplayRule;
  on: { [K in E['type']]?: Handler<Extract<E, { type: K }>, Deps> };
}

// biome-ignore lint/suspicious/noExplicitAny: a list of reactors of different event types
export type AnyReactor<Deps> = Reactor<any, Deps>;

export const reactor = <E extends NewEvent, Deps>(r: Reactor<E, Deps>) => r;

/** The reactor's checkpoint, and the name of its lease. */
export const reactorCheckpoint = (r: Pick<AnyReactor<unknown>, 'name'>): string => `reactor_${r.name}`;
