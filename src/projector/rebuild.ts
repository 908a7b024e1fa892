/**
 * Offline work on read models: rebuild one into a shadow collection and promote it (blue/green),
 * and verify one by rebuilding a shadow to the live checkpoint and comparing documents.
 */
import { isDeepStrictEqual } from 'node:util';
import { comparePositions, START, type EventStore, type Position } from '../eventstore/port.js';
import type { Doc, DocumentStore } from '../readstore/port.js';
import { applyEvents } from './batch.js';
import { type AnyProjection, collectionOf } from './projection.js';

const READ_BATCH = 5000;

export interface Progress {
  events: number;
  position: Position;
  head: Position;
}

/** Replays the log into `target` from scratch, stopping after `until` (default: the head). */
async function replayInto(
  events: EventStore,
  docs: DocumentStore,
  projection: AnyProjection,
  target: string,
  until: Position | null,
  onProgress: (p: Progress) => void,
): Promise<number> {
  await docs.drop(target);
  await docs.ensureCollection(target, projection.indexes);
  const head = until ?? (await events.headPosition());
  let position = START;
  let count = 0;
  for (;;) {
    const batch = (await events.readAll(position, READ_BATCH)).filter((e) => comparePositions(e.position, head) <= 0);
    if (batch.length === 0) break;
    position = batch[batch.length - 1]!.position;
    const writes = await applyEvents(projection, target, docs.collection(target), batch);
    await docs.commit(writes, target, position);
    count += batch.length;
    onProgress({ events: count, position, head });
    if (comparePositions(position, head) >= 0) break;
  }
  return count;
}

/** Rebuilds a read model beside the live one, then swaps it in. Returns the events replayed. */
export async function rebuildProjection(
  events: EventStore,
  docs: DocumentStore,
  projection: AnyProjection,
  onProgress: (p: Progress) => void = () => {},
): Promise<number> {
  const live = collectionOf(projection);
  const shadow = `${live}__rebuild`;
  const count = await replayInto(events, docs, projection, shadow, null, onProgress);
  await docs.promote(shadow, live);
  return count;
}

export interface Difference {
  id: string;
  live: Doc | null;
  rebuilt: Doc | null;
}

/** Rebuilds a shadow up to the live checkpoint and lists every document that differs. */
export async function verifyProjection(
  events: EventStore,
  docs: DocumentStore,
  projection: AnyProjection,
): Promise<Difference[]> {
  const live = collectionOf(projection);
  const shadow = `${live}__verify`;
  const checkpoint = (await docs.readCheckpoint(live)) ?? START;
  try {
    await replayInto(events, docs, projection, shadow, checkpoint, () => {});
    // A never-written collection is a missing table on some stores: make sure both exist.
    await docs.ensureCollection(shadow, []);
    await docs.ensureCollection(live, projection.indexes);
    return await diff(docs, live, shadow);
  } finally {
    await docs.drop(shadow);
  }
}

/** Both scans come in id order, so one merge pass finds every difference in constant memory. */
async function diff(docs: DocumentStore, live: string, shadow: string): Promise<Difference[]> {
  const a = docs.collection(live).scan()[Symbol.asyncIterator]();
  const b = docs.collection(shadow).scan()[Symbol.asyncIterator]();
  const differences: Difference[] = [];
  let x = await a.next();
  let y = await b.next();
  while (!x.done || !y.done) {
    if (!x.done && (y.done || x.value[0] < y.value[0])) {
      differences.push({ id: x.value[0], live: x.value[1], rebuilt: null });
      x = await a.next();
    } else if (!y.done && (x.done || y.value[0] < x.value[0])) {
      differences.push({ id: y.value[0], live: null, rebuilt: y.value[1] });
      y = await b.next();
    } else if (!x.done && !y.done) {
      if (!isDeepStrictEqual(x.value[1], y.value[1])) differences.push({ id: x.value[0], live: x.value[1], rebuilt: y.value[1] });
      x = await a.next();
      y = await b.next();
    }
  }
  return differences;
}
