/**
 * The folded state of streams, kept between reads: a read fetches only what was appended since
 * (one indexed lookup when nothing was) and folds it onto the kept state. Streams are only ever
 * appended to, so the kept state and the tail are the stream's state now. Bounded: the stream
 * read least recently is forgotten first.
 */
import type { EventStore, NewEvent } from '../eventstore/port.js';
import type { Decider } from './decider.js';

export type Folder<E extends NewEvent, S> = Pick<Decider<unknown, E, S>, 'initialState' | 'evolve'>;

interface Kept {
  folder: object;
  /** The revision the next unread event will have. */
  next: bigint;
  state: unknown;
}

const CAPACITY = 10_000;

export type StreamStates = <E extends NewEvent, S>(folder: Folder<E, S>, stream: string) => Promise<S>;

export function streamStates(events: EventStore, capacity = CAPACITY): StreamStates {
  const kept = new Map<string, Kept>();
  return async <E extends NewEvent, S>(folder: Folder<E, S>, stream: string): Promise<S> => {
    const hit = kept.get(stream);
    const from = hit?.folder === folder ? hit : undefined;
    const tail = await events.readStream(stream, from ? { fromRevision: from.next } : {});
    const state = (tail as unknown as E[]).reduce(folder.evolve, from ? (from.state as S) : folder.initialState());
    kept.delete(stream); // re-inserted last: the Map's order is the order of use
    kept.set(stream, { folder, next: tail.length ? tail.at(-1)!.revision + 1n : (from?.next ?? 0n), state });
    if (kept.size > capacity) kept.delete(kept.keys().next().value!);
    return state;
  };
}
