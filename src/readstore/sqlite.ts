/**
 * The embedded document store: one table of JSON documents per collection, expression indexes
 * over `json_extract`, and a `checkpoints` table written in the same transaction as the documents
 * (and the `set_aside` table beside it: events a read model skipped, keyed by its checkpoint).
 *
 * Documents are stored as SQLite's binary JSON (JSONB): index expressions and filters read fields
 * without parsing the whole text again, which halves building the runs indexes and speeds every
 * write that updates them; reads turn it back into text with `json(doc)`. Tables written as text
 * by earlier versions stay readable (every JSON function takes both forms).
 */
import { positionKey } from '../eventstore/port.js';
import type { Doc, DocumentStore, Update } from './port.js';
import { checkUpdate } from './update.js';
import { SET_ASIDE } from './set-aside.js';
import { whenUnlocked } from '../sqlite-snapshot.js';
import { openSqliteConnection } from './sqlite-connection.js';
import { sqliteCheckpoints } from './sqlite-checkpoints.js';
import { sqliteCollection } from './sqlite-collection.js';
import { indexCatalog } from './sqlite-indexes.js';
import { collectionWrites, documentWrites } from './sqlite-writes.js';

export function openSqliteDocumentStore(file: string): DocumentStore {
  const conn = openSqliteConnection(file);
  const checkpoints = sqliteCheckpoints(conn);
  const indexes = indexCatalog(conn);
  const documents = documentWrites(conn, checkpoints);
  const collections = collectionWrites(conn);
  /** A table was renamed or dropped: kept statements and index names may name what is gone. */
  const forgetSchema = (): void => {
    conn.forgetStatements();
    indexes.forget();
  };
  return {
    async update<T extends Doc>(collection: string, id: string, u: Update) {
      checkUpdate(u);
      return (await whenUnlocked(() => documents.update(collection, id, u))) as T | null;
    },
    async remove(collection, id, when) {
      return whenUnlocked(() => documents.remove(collection, id, when));
    },
    async ensureCollection(name, declared) {
      await whenUnlocked(() => collections.ensureCollection(name, declared));
      indexes.forget(name);
    },
    collection: <T extends Doc>(name: string) => sqliteCollection<T>(conn, indexes, name),
    async commit(writes, checkpoint, position, expected) {
      await whenUnlocked(() => documents.commitAll([{ writes, checkpoint, position, expected }], undefined));
    },
    async commitAll(parts, fence) {
      await whenUnlocked(() => documents.commitAll(parts, fence));
    },
    async readCheckpoint(name) {
      return conn.read(() => checkpoints.get(name));
    },
    listCheckpoints: async () => checkpoints.list(),
    listSetAside: async (checkpoint, limit) => checkpoints.listSetAside(checkpoint, limit),
    countSetAside: async () => checkpoints.countSetAside(),
    async clearSetAside(checkpoint, position) {
      return whenUnlocked(() => collections.clearSetAside(checkpoint, positionKey(position)));
    },
    async promote(source, target) {
      await whenUnlocked(() => collections.promote(source, target));
      forgetSchema();
    },
    async drop(name) {
      await whenUnlocked(() => collections.drop(name));
      forgetSchema();
    },
    async listCollections() {
      const rows = conn.read(() =>
        conn
          .stmt(
            `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('checkpoints', '${SET_ASIDE}')
           AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`,
          )
          .all(),
      ) as { name: string }[];
      return rows.map((row) => row.name);
    },
    close: () => conn.close(),
  };
}
