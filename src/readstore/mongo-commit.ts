/**
 * Read models' commits on MongoDB. With no cheap transaction across collections outside replica
 * sets, every document write is guarded by its position instead: replaying events after a crash
 * (the checkpoint is written last) never moves a document back.
 */
import { MongoBulkWriteError, type AnyBulkWriteOperation, type Document, type Filter as MongoFilter } from 'mongodb';
import {
  CheckpointMoved,
  type CheckpointedWrites,
  type DocWrite,
  type Fence,
  FenceLost,
  samePosition,
} from './port.js';
import { encodeSetAside } from './set-aside.js';
import { translateFilter } from './mongo-filter.js';
import {
  assertCollectionName,
  type MongoTables,
  type Stored,
  type StoredPosition,
  toPosition,
} from './mongo-layout.js';
import type { Filter } from './port.js';

export const DUPLICATE_KEY = 11000;

function pad(n: bigint): string {
  if (n < 0n) throw new RangeError(`a document position cannot be negative: ${n}`);
  return n.toString().padStart(20, '0');
}

/** A write applies only over an older version (or none): guarded by (commit, prepare). */
const olderThan = (pos: StoredPosition): Document => ({
  $or: [
    { _pos: { $exists: false } },
    { '_pos.commit': { $lt: pos.commit } },
    { '_pos.commit': pos.commit, '_pos.prepare': { $lt: pos.prepare } },
  ],
});

/** A duplicate key on an upsert means the guard found a newer document: nothing to do. */
function onlyStaleWrites(error: unknown): boolean {
  if (!(error instanceof MongoBulkWriteError) || error.err) return false;
  const errors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
  return errors.length > 0 && errors.every((e) => e.code === DUPLICATE_KEY);
}

/** The guarded writes of `writes`, by collection. */
function guardedWrites(writes: readonly DocWrite[]): Map<string, AnyBulkWriteOperation<Stored>[]> {
  const byCollection = new Map<string, AnyBulkWriteOperation<Stored>[]>();
  for (const w of writes) {
    assertCollectionName(w.collection);
    const pos = { commit: pad(w.position.commit), prepare: pad(w.position.prepare) };
    const filter = { _id: w.id, ...olderThan(pos) } as MongoFilter<Stored>;
    let op: AnyBulkWriteOperation<Stored>;
    if (w.doc === null) {
      // No tombstone: a replay from before the delete may briefly bring the document back,
      // until the replay reaches the delete again. The checkpoint moves only after that.
      op = { deleteOne: { filter } };
    } else {
      if ('_id' in w.doc || '_pos' in w.doc) throw new Error(`${w.collection}/${w.id}: _id and _pos are reserved`);
      op = { replaceOne: { filter, replacement: { ...w.doc, _id: w.id, _pos: pos }, upsert: true } };
    }
    const ops = byCollection.get(w.collection) ?? [];
    ops.push(op);
    byCollection.set(w.collection, ops);
  }
  return byCollection;
}

export async function commitPart(
  { checkpoints, setAside, docs, saveCheckpoint }: MongoTables,
  { writes, checkpoint: checkpointName, position, expected, setAside: skipped }: CheckpointedWrites,
): Promise<void> {
  // Not atomic with the writes below (those are guarded by position); it stops a projector
  // from writing over a collection that a rebuild has just swapped in.
  if (expected !== undefined) {
    const stored = await checkpoints.findOne({ _id: checkpointName });
    if (!samePosition(stored ? toPosition(stored) : null, expected)) throw new CheckpointMoved(checkpointName);
  }
  for (const [name, ops] of guardedWrites(writes)) {
    try {
      await docs(name).bulkWrite(ops, { ordered: false });
    } catch (error) {
      if (!onlyStaleWrites(error)) throw error;
    }
  }
  if (skipped?.length) {
    await setAside.bulkWrite(
      skipped.map((e) => {
        const stored = { ...encodeSetAside(e), checkpoint: checkpointName };
        return {
          replaceOne: { filter: { checkpoint: checkpointName, key: stored.key }, replacement: stored, upsert: true },
        };
      }),
    );
  }
  await saveCheckpoint(checkpointName, position);
}

/** Document `id`, and only when it matches `when` (an `id` field in `when` names the document too). */
export const only = (id: string, when: Filter | undefined): MongoFilter<Stored> =>
  ({ $and: [{ _id: id }, translateFilter(when)] }) as MongoFilter<Stored>;

export async function checkFence({ docs }: MongoTables, fence: Fence | undefined): Promise<void> {
  if (fence && !(await docs(fence.collection).findOne(only(fence.id, fence.when), { projection: { _id: 1 } })))
    throw new FenceLost(fence);
}
