/**
 * The MongoDB store's writes outside read models' commits: conditional writes of one document
 * (state the processes of one store share), and collections made and swapped in.
 */
import { MongoServerError, type Document } from 'mongodb';
import { comparePositions } from '../eventstore/port.js';
import type { Doc, IndexSpec, Update } from './port.js';
import type { DeclaredIndex } from './index-choice.js';
import { checkUpdate } from './update.js';
import { fieldName } from './mongo-filter.js';
import { assertCollectionName, type MongoTables, strip, toPosition } from './mongo-layout.js';
import { DUPLICATE_KEY, only } from './mongo-commit.js';

const NAMESPACE_EXISTS = 48;

export async function updateDocument<T extends Doc>(
  { docs }: MongoTables,
  collection: string,
  id: string,
  u: Update,
): Promise<T | null> {
  checkUpdate(u);
  const coll = docs(collection);
  const change = { ...(u.set ? { $set: u.set } : {}), ...(u.inc ? { $inc: u.inc } : {}) } as Document;
  // One conditional statement; a missing document is inserted apart, so that none of `when`'s
  // equalities seed it (as an upsert would), and a concurrent insert makes it lose.
  const updated = await coll.findOneAndUpdate(only(id, u.when), change, { returnDocument: 'after' });
  if (updated) return strip<T>(updated);
  if (!u.upsert) return null;
  const doc = { ...(u.set ?? {}), ...(u.inc ?? {}) };
  try {
    await coll.insertOne({ ...doc, _id: id });
    return doc as T;
  } catch (error) {
    if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) return null;
    throw error;
  }
}

/** Makes collection `name` and its indexes, recorded in `declared` for finds to choose among. */
export async function ensureCollection(
  { db, docs }: MongoTables,
  declared: Map<string, DeclaredIndex[]>,
  name: string,
  indexes: readonly IndexSpec[],
): Promise<void> {
  try {
    await db.createCollection(docs(name).collectionName);
  } catch (error) {
    if (!(error instanceof MongoServerError && error.code === NAMESPACE_EXISTS)) throw error;
  }
  // As SQLite's indexes, each ends with the id: finds choose among them alike (index-choice.ts).
  declared.set(
    name,
    indexes.map((fields) => ({ name: fields.join(','), fields: [...fields, 'id'] })),
  );
  for (const fields of indexes) {
    if (fields.length === 0) throw new Error('an index needs at least one field');
    // createIndex is idempotent for an identical key pattern.
    await docs(name).createIndex(fields.map((f) => [fieldName(f), 1] as [string, 1]));
  }
}

export async function promoteCollection(tables: MongoTables, source: string, target: string): Promise<void> {
  const { db, checkpoints, setAside, saveCheckpoint } = tables;
  assertCollectionName(source);
  assertCollectionName(target);
  if (source === target) throw new Error(`cannot promote ${source} onto itself`);
  if ((await db.listCollections({ name: source }, { nameOnly: true }).toArray()).length === 0) {
    throw new Error(`no collection ${source}`);
  }
  // Not atomic. Until the rename, the target's checkpoint is the older of the two, which is safe
  // for either data set: a replay from there only repeats guarded writes.
  const [from, to] = await Promise.all([checkpoints.findOne({ _id: source }), checkpoints.findOne({ _id: target })]);
  const older = from && to ? (comparePositions(toPosition(from), toPosition(to)) < 0 ? from : to) : null;
  if (older) await saveCheckpoint(target, toPosition(older));
  else await checkpoints.deleteOne({ _id: target });
  await db.renameCollection(source, target, { dropTarget: true });
  if (from) await saveCheckpoint(target, toPosition(from));
  await checkpoints.deleteOne({ _id: source });
  await setAside.deleteMany({ checkpoint: target });
  await setAside.updateMany({ checkpoint: source }, { $set: { checkpoint: target } });
}
