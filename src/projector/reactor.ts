/**
 * Reactors: subscriptions that turn events into commands (dispatch creates a task, a cancelled
 * task cancels its run tree). Each has its own checkpoint; delivery is at least once, so every
 * command a reactor sends carries ids derived from the causing event and is safe to repeat.
 * Each runs in one process of a store at a time (its lease, `reactor_<name>`), its checkpoint
 * commits fenced by the lease.
 */
import type { Logger } from 'pino';
import { v5 as uuidv5 } from 'uuid';
import {
  comparePositions,
  type EventStore,
  type NewEvent,
  type Position,
  type RecordedEvent,
  START,
} from '../eventstore/port.js';
import type { CommandContext } from '../kernel/handle.js';
import { type DocumentStore, type Fence, FenceLost } from '../readstore/port.js';
import { own } from '../own-keys.js';

const NAMESPACE = '6f1d8a52-3c4e-4f0b-9a57-2b8e1c9d7e10';
const RETRY_AFTER_FAILURE_MS = 1000;
const BATCH_SIZE = 1000;

/** A stable id for the `purpose` of reacting to `event`: the same on every replay. */
export const derivedId = (event: Pick<RecordedEvent, 'id'>, purpose: string) =>
  uuidv5(`${event.id}:${purpose}`, NAMESPACE);

/** The context of commands sent because of `event`: by the system, caused by it. */
export const reactionContext = (event: RecordedEvent, now: Date): CommandContext => ({
  now: now.toISOString(),
  actor: { type: 'system', uid: 'reactor' },
  teams: {},
  team_uid: event.metadata.team_uid,
  correlation_id: event.metadata.correlation_id,
  causation_id: event.id,
  request_id: null,
});

type Reaction<E extends NewEvent, Deps> = (event: RecordedEvent<E>, deps: Deps) => Promise<void>;

export interface Reactor<E extends NewEvent = NewEvent, Deps = unknown> {
  name: string;
  on: { [K in E['type']]?: Reaction<Extract<E, { type: K }>, Deps> };
}

// biome-ignore lint/suspicious/noExplicitAny: a list of reactors of different event types
export type AnyReactor<Deps> = Reactor<any, Deps>;

export const reactor = <E extends NewEvent, Deps>(r: Reactor<E, Deps>) => r;

/** The reactor's checkpoint, and the name of its lease. */
export const reactorCheckpoint = (r: Pick<AnyReactor<unknown>, 'name'>): string => `reactor_${r.name}`;

/**
 * Runs one reactor until `signal` aborts, or its `fence` no longer holds; `before` runs ahead of
 * each event (read models).
 */
export async function runReactor<Deps>(
  r: AnyReactor<Deps>,
  deps: Deps,
  events: EventStore,
  docs: DocumentStore,
  log: Logger,
  signal: AbortSignal,
  before: (event: RecordedEvent) => Promise<void>,
  fence?: Fence,
): Promise<void> {
  const checkpointName = reactorCheckpoint(r);
  const save = (position: Position) => docs.commitAll([{ writes: [], checkpoint: checkpointName, position }], fence);
  const types = Object.keys(r.on);
  const react = async (event: RecordedEvent) => {
    const handler = own(r.on, event.type);
    if (handler) {
      await before(event);
      await handler(event, deps);
    }
  };
  while (!signal.aborted) {
    try {
      let position = (await docs.readCheckpoint(checkpointName)) ?? START;
      // The stored log first, reading only the events it reacts to (a fresh read store replays
      // the whole log); then every append as it commits.
      const head = await events.headPosition();
      while (comparePositions(position, head) < 0 && !signal.aborted) {
        const batch = (await events.readAll(position, BATCH_SIZE, types)).filter(
          (e) => comparePositions(e.position, head) <= 0,
        );
        for (const event of batch) await react(event);
        position = batch.length === BATCH_SIZE ? batch[batch.length - 1]!.position : head;
        await save(position);
      }
      for await (const batch of events.subscribe(position, signal, BATCH_SIZE)) {
        for (const event of batch) {
          await react(event);
          position = event.position;
        }
        await save(position);
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof FenceLost) {
        log.warn({ reactor: r.name }, 'reactor lease taken over; leaving it to the new owner');
        return;
      }
      log.error({ err: error, reactor: r.name }, 'reactor failed; resuming from its checkpoint');
      await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_FAILURE_MS));
    }
  }
}
