/**
 * The newest events the embedded store's subscribers read, decoded once and shared by all of them.
 * Live, every subscriber (the projector, each reactor, worker presence) wants the same few new
 * events; each used to read and JSON-parse them on its own, about a fifth of the server's CPU
 * under a stream of commands. A subscriber whose position lies inside the tail takes its events
 * from it; the one at its end reads the log once and extends it for the others.
 *
 * Sound because positions are commit order (one writer): a read after `p` is the whole log after
 * `p` up to its last event, and nothing can later commit below that. Bounded to `limit` events.
 * The events handed out are shared: no subscriber may change one.
 */
import type { RecordedEvent } from './port.js';

/** Enough for a reactor's batch; a subscriber further behind reads the log itself. */
const TAIL_LIMIT = 1000;

const positionOf = (e: RecordedEvent): number => Number(e.position.commit);

/** Index of the first event after `position` (events are in position order). */
function firstAfter(events: readonly RecordedEvent[], position: number): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (positionOf(events[mid]!) <= position) low = mid + 1;
    else high = mid;
  }
  return low;
}

export interface SharedTail {
  /** Up to `max` events after `position`, from the tail when it holds them, else read (and kept). */
  after(position: number, max: number): RecordedEvent[];
}

export function sharedTail(
  readAfter: (position: number, max: number) => RecordedEvent[],
  limit = TAIL_LIMIT,
): SharedTail {
  let events: RecordedEvent[] = [];
  /** The tail holds every event after `from` up to `end`. */
  let from = -1;
  let end = -1;

  const remember = (position: number, read: RecordedEvent[]): void => {
    events = position === end ? events.concat(read) : read.slice();
    if (position !== end) from = position;
    if (events.length > limit) {
      from = positionOf(events[events.length - limit - 1]!);
      events = events.slice(-limit);
    }
    end = positionOf(events[events.length - 1]!);
  };

  return {
    after(position, max) {
      if (position >= from && position < end) {
        const first = firstAfter(events, position);
        return events.slice(first, first + max);
      }
      const read = readAfter(position, max);
      if (read.length > 0) remember(position, read);
      return read;
    },
  };
}
