/**
 * Read models as they were: runs a projection over one stream's events up to a moment, in
 * memory, and returns the document it would have held then (for `?as_of=` on GETs).
 */
import type { EventStore, RecordedEvent } from '../eventstore/port.js';
import type { Collection, Doc } from '../readstore/port.js';
import { applyEvents } from './batch.js';
import type { AnyProjection } from './projection.js';

/** A collection of one batch's making: nothing stored yet. */
const empty: Collection = {
  get: async () => null,
  getMany: async () => new Map(),
  find: async () => ({ items: [], next: null }),
  count: async () => 0,
  async *scan() {},
  explain: async () => [],
};

/** The events of `streams` that occurred at or before `asOf`, in log order. */
export async function eventsAsOf(
  events: EventStore,
  streams: readonly string[],
  asOf: string,
): Promise<RecordedEvent[]> {
  const at = Date.parse(asOf);
  const all = (await Promise.all(streams.map((s) => events.readStream(s)))).flat();
  return all
    .filter((e) => Date.parse(e.metadata.occurred_at) <= at)
    .sort((a, b) =>
      a.position.commit === b.position.commit
        ? Number(a.position.prepare - b.position.prepare)
        : a.position.commit < b.position.commit
          ? -1
          : 1,
    );
}

/** The document `id` of `projection` as the given events leave it, or null. */
export async function projectAsOf(
  projection: AnyProjection,
  events: readonly RecordedEvent[],
  id: string,
): Promise<Doc | null> {
  const writes = await applyEvents(projection, 'as_of', () => empty, events);
  return writes.findLast((w) => w.id === id)?.doc ?? null;
}
