/**
 * The MongoDB document store. Collections map 1:1; a document is stored with `_id` = its id and
 * `_pos` = the position of the event that last wrote it. MongoDB has no cheap multi-collection
 * transaction outside replica sets, so every document write is guarded by its position instead:
 * replaying events after a crash (the checkpoint is written last) never moves a document back.
 * Events a read model set aside are kept in `set_aside`, one document per checkpoint and position,
 * written before the checkpoint too, so a replay after a crash records them again in place.
 */
import { MongoClient } from 'mongodb';
import { positionKey } from '../eventstore/port.js';
import type { Doc, DocumentStore, Update } from './port.js';
import { decodeSetAside } from './set-aside.js';
import type { DeclaredIndex } from './index-choice.js';
import { isDocumentCollection, openTables, toPosition } from './mongo-layout.js';
import { mongoCollection } from './mongo-collection.js';
import { checkFence, commitPart, only } from './mongo-commit.js';
import { ensureCollection, promoteCollection, updateDocument } from './mongo-writes.js';

export async function openMongoDocumentStore(url: string, dbName?: string): Promise<DocumentStore> {
  const client = new MongoClient(url);
  await client.connect();
  const tables = await openTables(client.db(dbName));
  const { db, checkpoints, setAside, docs } = tables;
  const declared = new Map<string, DeclaredIndex[]>();
  return {
    update: <T extends Doc>(collection: string, id: string, u: Update) => updateDocument<T>(tables, collection, id, u),
    async remove(collection, id, when) {
      return (await docs(collection).deleteOne(only(id, when))).deletedCount === 1;
    },
    ensureCollection: (name, indexes) => ensureCollection(tables, declared, name, indexes),
    collection: <T extends Doc>(name: string) => mongoCollection<T>(docs(name), () => declared.get(name) ?? []),
    async commit(writes, checkpoint, position, expected) {
      await commitPart(tables, { writes, checkpoint, position, expected });
    },
    async commitAll(parts, fence) {
      await checkFence(tables, fence);
      for (const part of parts) await commitPart(tables, part);
    },
    async readCheckpoint(name) {
      const found = await checkpoints.findOne({ _id: name });
      return found ? toPosition(found) : null;
    },
    async listCheckpoints() {
      const found = await checkpoints.find({}).sort({ _id: 1 }).toArray();
      return found.map((c) => ({ name: c._id, position: toPosition(c) }));
    },
    async listSetAside(checkpoint, limit) {
      const found = setAside
        .find(checkpoint === undefined ? {} : { checkpoint })
        .sort({ checkpoint: 1, key: 1 })
        .limit(limit ?? 0);
      return (await found.toArray()).map(({ checkpoint, ...stored }) => decodeSetAside(checkpoint, stored));
    },
    async countSetAside() {
      const groups = setAside.aggregate<{ _id: string; n: number }>([
        { $group: { _id: '$checkpoint', n: { $sum: 1 } } },
      ]);
      return new Map((await groups.toArray()).map((g) => [g._id, g.n]));
    },
    async clearSetAside(checkpoint, position) {
      return (await setAside.deleteOne({ checkpoint, key: positionKey(position) })).deletedCount === 1;
    },
    promote: (source, target) => promoteCollection(tables, source, target),
    async drop(name) {
      await docs(name).drop();
      await checkpoints.deleteOne({ _id: name });
      await setAside.deleteMany({ checkpoint: name });
    },
    async listCollections() {
      const found = await db.listCollections({}, { nameOnly: true }).toArray();
      return found
        .map((c) => c.name)
        .filter(isDocumentCollection)
        .sort();
    },
    async close() {
      await client.close();
    },
  };
}
