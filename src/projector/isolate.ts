/**
 * Poison events: an event a read model cannot apply must stop neither that read model nor any
 * other. Its handler throwing, or the store refusing the documents it made (too deep, too
 * large), is the event's fault: the event is set aside for that read model alone, recorded
 * beside its checkpoint in the same commit, and the read model goes on with the next event.
 * The store's own trouble (busy, full, unreachable) is nobody's fault: it fails the commit, and
 * the caller tries again later as before.
 */
import { comparePositions, START, type Position, type RecordedEvent } from '../eventstore/port.js';
import {
  CheckpointMoved,
  type CheckpointedWrites,
  FenceLost,
  type DocumentStore,
  type DocWrite,
  type Fence,
  isStoreFault,
  type SetAsideEvent,
} from '../readstore/port.js';
import { projectionBatch } from './batch.js';
import type { AnyProjection } from './projection.js';

/** Enough of an error message to tell what went wrong, not a whole document quoted back. */
const MAX_ERROR_LENGTH = 1000;

/** A read model being written: the projection, its collection (and checkpoint) and where it stands. */
export interface Target {
  readonly projection: AnyProjection;
  readonly collection: string;
  /** Events up to here are done; moves with every commit. */
  position: Position;
  /** Commit only over `position`: a rebuild may have swapped in another collection (live projector). */
  readonly guarded: boolean;
}

/** Called after each commit of a target, with the events it set aside in that commit. */
export type OnCommitted = (target: Target, wrote: boolean, setAside: readonly SetAsideEvent[]) => void;

export function setAsideOf(event: RecordedEvent, error: unknown): SetAsideEvent {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return {
    position: event.position,
    stream: event.stream,
    revision: event.revision,
    event_id: event.id,
    event_type: event.type,
    metadata: event.metadata,
    error: message.length > MAX_ERROR_LENGTH ? `${message.slice(0, MAX_ERROR_LENGTH)}…` : message,
    at: new Date().toISOString(),
  };
}

/** A failed commit that may be the documents' fault; anything else is thrown on as it is. */
export const mayBeRefusal = (error: unknown): boolean =>
  !(error instanceof CheckpointMoved) && !(error instanceof FenceLost) && !isStoreFault(error);

interface Part {
  target: Target;
  writes: DocWrite[];
  setAside: SetAsideEvent[];
  position: Position;
}

const commitOf = ({ target, writes, setAside, position }: Part): CheckpointedWrites => ({
  writes,
  checkpoint: target.collection,
  position,
  setAside,
  ...(target.guarded ? { expected: target.position === START ? null : target.position } : {}),
});

/** The target's writes for the events after its position, and the events its handlers threw on. */
async function partOf(docs: DocumentStore, target: Target, events: readonly RecordedEvent[]): Promise<Part | null> {
  const fresh = events.filter((e) => comparePositions(e.position, target.position) > 0);
  if (fresh.length === 0) return null;
  const batch = projectionBatch(target.projection, target.collection, (name) => docs.collection(name));
  await batch.apply(fresh);
  return {
    target,
    writes: await batch.writes(),
    setAside: batch.failed().map((f) => setAsideOf(f.event, f.error)),
    position: fresh[fresh.length - 1]!.position,
  };
}

/**
 * Applies `events` to every target and commits them with the targets' checkpoints as one. When
 * the store refuses that commit, commits each half again, and so on, until the one event it
 * refuses is found: that event is set aside for the targets whose documents the store refuses
 * even alone, and the others apply it. A batch with one bad event among n costs about 2 log2(n)
 * commits. Throws CheckpointMoved, FenceLost (`fence` no longer holds) and the store's own faults
 * as they come.
 */
export async function commitIsolated(
  docs: DocumentStore,
  targets: readonly Target[],
  events: readonly RecordedEvent[],
  committed: OnCommitted,
  fence?: Fence,
): Promise<void> {
  const parts: Part[] = [];
  for (const target of targets) {
    const part = await partOf(docs, target, events);
    if (part) parts.push(part);
  }
  if (parts.length === 0) return;
  const done = (part: Part) => {
    part.target.position = part.position;
    committed(part.target, part.writes.length > 0, part.setAside);
  };
  try {
    await docs.commitAll(parts.map(commitOf), fence);
    parts.forEach(done);
    return;
  } catch (error) {
    if (!mayBeRefusal(error)) throw error;
    if (events.length > 1) {
      const half = Math.ceil(events.length / 2);
      await commitIsolated(docs, targets, events.slice(0, half), committed, fence);
      await commitIsolated(docs, targets, events.slice(half), committed, fence);
      return;
    }
  }
  // One event, refused: each read model alone (a second try for each), and the refused set it aside.
  for (const part of parts) {
    try {
      await docs.commitAll([commitOf(part)], fence);
      done(part);
    } catch (error) {
      if (!mayBeRefusal(error)) throw error;
      const skipped = { ...part, writes: [], setAside: [...part.setAside, setAsideOf(events[0]!, error)] };
      await docs.commitAll([commitOf(skipped)], fence);
      done(skipped);
    }
  }
}
