/**
 * Offline work on read models: rebuild one into a shadow collection and promote it (blue/green),
 * and verify one by rebuilding a shadow to the live checkpoint and comparing documents.
 */
import { isDeepStrictEqual } from 'node:util';
import { comparePositions, START, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js';
import type { Doc, DocumentStore, Fence, SetAsideEvent } from '../readstore/port.js';
import { projectionBatch } from './batch.js';
import { commitIsolated, mayBeRefusal, setAsideOf, type Target } from './isolate.js';
import { type AnyProjection, collectionOf, collectionsOf } from './projection.js';

/**
 * Large commits fold more changes of one document into one write. Events are read in smaller
 * pages, so that they die young: a page of 20,000 outlived several scavenges, and copying it
 * there was a quarter of a rebuild.
 */
const COMMIT_EVERY = 20_000;
const READ_PAGE = 2_000;

export interface Progress {
  /** Events handled so far (events of types no chosen read model handles are never read). */
  events: number;
  position: Position;
  head: Position;
}

/** Every event type the projections handle: the only events a replay needs to read. */
const handledTypes = (projections: readonly AnyProjection[]): string[] => [
  ...new Set(projections.flatMap((p) => Object.keys(p.on))),
];

/** For each event type, the indexes of the projections that handle it. */
function readersByType(projections: readonly AnyProjection[]): Map<string, number[]> {
  const readers = new Map<string, number[]>();
  for (const [i, p] of projections.entries())
    for (const type of Object.keys(p.on)) readers.set(type, [...(readers.get(type) ?? []), i]);
  return readers;
}

/** Each projection's events of `page`, in log order: one look at each event's type, not one per projection. */
function sharesOf(page: readonly RecordedEvent[], readers: Map<string, number[]>): Array<RecordedEvent[] | undefined> {
  const shares: Array<RecordedEvent[] | undefined> = [];
  for (const e of page) for (const i of readers.get(e.type) ?? []) (shares[i] ??= []).push(e);
  return shares;
}

/** The events of `types` after `after`, up to and including `until`. */
async function readBetween(
  events: EventStore,
  types: readonly string[],
  after: Position,
  until: Position,
): Promise<RecordedEvent[]> {
  const read: RecordedEvent[] = [];
  for (let position = after; comparePositions(position, until) < 0; ) {
    const page = (await events.readAll(position, READ_PAGE, types)).filter(
      (e) => comparePositions(e.position, until) <= 0,
    );
    read.push(...page);
    if (page.length < READ_PAGE) break;
    position = page[page.length - 1]!.position;
  }
  return read;
}

/** Told of each event a read model set aside (`target.collection` names the read model). */
export type OnSetAside = (target: Target, event: SetAsideEvent) => void;

/**
 * Replays the log into fresh `targets` (one per projection, emptied first), in one pass, stopping
 * after `until` (default: the head), and leaves each checkpointed there with its indexes built.
 * Each commit writes every target as one. Events a read model cannot apply are set aside as the
 * live projector sets them aside (projector/isolate), so a replay never dies on one. With `fence`
 * (the live projector loading new read models), nothing is dropped or written once the lease is
 * lost. Returns the events handled.
 */
export async function replayInto(
  events: EventStore,
  docs: DocumentStore,
  projections: readonly AnyProjection[],
  targets: readonly string[],
  until: Position | null,
  onProgress: (p: Progress) => void,
  onSetAside: OnSetAside = () => {},
  fence?: Fence,
): Promise<number> {
  if (fence) await docs.commitAll([], fence);
  for (const [i, target] of targets.entries()) {
    for (const { name } of collectionsOf(projections[i]!, target)) {
      await docs.drop(name);
      await docs.ensureCollection(name, []);
    }
  }
  const head = until ?? (await events.headPosition());
  const types = handledTypes(projections);
  const readers = readersByType(projections);
  const written: Target[] = projections.map((p, i) => ({
    projection: p,
    collection: targets[i]!,
    position: START,
    guarded: false,
  }));
  const fresh = () => written.map((t) => projectionBatch(t.projection, t.collection, (name) => docs.collection(name)));
  let [batches, pending, count, position] = [fresh(), 0, 0, START];
  for (let last = false; !last; ) {
    const page = (await events.readAll(position, READ_PAGE, types)).filter(
      (e) => comparePositions(e.position, head) <= 0,
    );
    last = page.length < READ_PAGE;
    const shares = sharesOf(page, readers);
    for (const [i, share] of shares.entries()) if (share) await batches[i]!.apply(share);
    pending += page.length;
    position = page.at(-1)?.position ?? position;
    if (pending > 0 && (last || pending >= COMMIT_EVERY)) {
      const parts = await Promise.all(
        batches.map(async (b, i) => ({
          writes: await b.writes(),
          checkpoint: targets[i]!,
          position,
          setAside: b.failed().map((f) => setAsideOf(f.event, f.error)),
        })),
      );
      try {
        await docs.commitAll(parts, fence);
        for (const [i, t] of written.entries()) {
          t.position = position;
          for (const e of parts[i]!.setAside) onSetAside(t, e);
        }
      } catch (error) {
        if (!mayBeRefusal(error)) throw error;
        // The store refused some document: go through these events again, halving until it is found.
        const again = await readBetween(events, types, written[0]!.position, position);
        await commitIsolated(
          docs,
          written,
          again,
          (t, _wrote, setAside) => {
            for (const e of setAside) onSetAside(t, e);
          },
          fence,
        );
      }
      count += pending;
      onProgress({ events: count, position, head });
      [batches, pending] = [fresh(), 0];
    }
  }
  // Everything up to the head was read, also past the last event handled.
  await docs.commitAll(
    targets.map((target) => ({ writes: [], checkpoint: target, position: head })),
    fence,
  );
  // Indexes built once over the loaded documents cost far less than kept up to date while loading.
  for (const [i, target] of targets.entries())
    for (const { name, indexes } of collectionsOf(projections[i]!, target)) await docs.ensureCollection(name, indexes);
  return count;
}

/**
 * Rebuilds read models beside the live ones, reading the log once for all of them, then swaps
 * each in: its documents, its checkpoint and the events it set aside, which replace the live
 * one's (so a rebuild after a fix is how set-aside events are retried). Returns the events handled.
 */
export async function rebuildProjections(
  events: EventStore,
  docs: DocumentStore,
  projections: readonly AnyProjection[],
  onProgress: (p: Progress) => void = () => {},
  onSetAside?: OnSetAside,
): Promise<number> {
  const shadows = projections.map((p) => `${collectionOf(p)}__rebuild`);
  const count = await replayInto(events, docs, projections, shadows, null, onProgress, onSetAside);
  // Tables first: the read model's own collection brings its checkpoint, which a live projector watches.
  for (const [i, p] of projections.entries()) {
    for (const { name } of collectionsOf(p, shadows[i]!).reverse())
      await docs.promote(name, name.replace(shadows[i]!, collectionOf(p)));
  }
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
  const pairs = collectionsOf(projection, live).map((c, i) => ({
    ...c,
    shadow: collectionsOf(projection, shadow)[i]!.name,
  }));
  try {
    await replayInto(events, docs, [projection], [shadow], checkpoint, () => {});
    const differences: Difference[] = [];
    for (const { name, indexes, shadow: rebuilt } of pairs) {
      // A never-written collection is a missing table on some stores: make sure both exist.
      await docs.ensureCollection(rebuilt, []);
      await docs.ensureCollection(name, indexes);
      const found = await diff(docs, name, rebuilt);
      differences.push(...(name === live ? found : found.map((d) => ({ ...d, id: `${name}/${d.id}` }))));
    }
    return differences;
  } finally {
    for (const { shadow: rebuilt } of pairs) await docs.drop(rebuilt);
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
      if (!isDeepStrictEqual(x.value[1], y.value[1]))
        differences.push({ id: x.value[0], live: x.value[1], rebuilt: y.value[1] });
      x = await a.next();
      y = await b.next();
    }
  }
  return differences;
}
