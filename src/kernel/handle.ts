/**
 * The one command handler: fold the stream, decide, append with the revision folded. The folded
 * state is kept between commands (kernel/stream-states), so only events not yet folded are read.
 * A concurrent writer makes the append fail; then the whole cycle runs again on fresh state.
 */
import { timeOrderedId } from '../ids.js';
import {
  ConcurrencyError,
  type EventMetadata,
  type EventStore,
  type NewEvent,
  type Position,
  type Reaction,
} from '../eventstore/port.js';
import type { Decider, DecideContext } from './decider.js';
import { Conflict } from './errors.js';
import type { FoldedStreams } from './stream-states.js';

export interface CommandContext extends DecideContext {
  team_uid: string | null;
  correlation_id: string;
  causation_id: string | null;
  request_id: string | null;
  /** Set by a reactor's reaction (projector/reactor): recorded on the events it appends. */
  reaction?: Reaction;
}

export interface Handled<E, S> {
  state: S;
  events: E[];
  /** Where the new events landed; null when the decision was a no-op. */
  position: Position | null;
}

const MAX_ATTEMPTS = 5;
const RETRY_JITTER_MS = 5;

export const metadataOf = (context: CommandContext): EventMetadata => ({
  actor: context.actor,
  team_uid: context.team_uid,
  correlation_id: context.correlation_id,
  causation_id: context.causation_id,
  request_id: context.request_id,
  occurred_at: context.now,
  ...(context.reaction ? { reaction: context.reaction } : {}),
});

export async function handleCommand<C, E extends NewEvent, S>(
  store: EventStore,
  folded: FoldedStreams,
  stream: string,
  decider: Decider<C, E, S>,
  command: C,
  context: CommandContext,
): Promise<Handled<E, S>> {
  for (let attempt = 1; ; attempt++) {
    const { state, revision } = await folded(decider, stream);
    const events = decider.decide(command, state, context);
    if (events.length === 0) return { state, events, position: null };
    const metadata = metadataOf(context);
    try {
      const { position } = await store.append(
        stream,
        events.map((e) => ({ id: timeOrderedId(), type: e.type, data: e.data, metadata })),
        revision ?? 'no_stream',
      );
      return { state: events.reduce(decider.evolve, state), events, position };
    } catch (error) {
      if (!(error instanceof ConcurrencyError)) throw error;
      // Retryable: an Idempotency-Key does not keep this answer, so a retry with the key runs again.
      if (attempt >= MAX_ATTEMPTS)
        throw new Conflict(`${stream} changed concurrently; retry the request`, 'conflict', true);
      // Writers that collided in one group commit would collide again: spread them out.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * RETRY_JITTER_MS * attempt));
    }
  }
}
