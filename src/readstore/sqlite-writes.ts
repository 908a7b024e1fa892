/**
 * The writes of the embedded document store, each one IMMEDIATE transaction (sqlite-snapshot's
 * `writing`): read models' commits with their checkpoints, conditional writes of one document,
 * and the changes of whole collections (create, promote, drop).
 */
import {
  CheckpointMoved,
  type CheckpointedWrites,
  type Doc,
  type Fence,
  FenceLost,
  type Filter,
  type IndexSpec,
  samePosition,
  type Update,
} from './port.js';
import type { Statement } from 'better-sqlite3';
import { applyUpdate } from './update.js';
import { compileFilter } from './sqlite-filter.js';
import { SET_ASIDE } from './set-aside.js';
import { type SqliteConnection, table } from './sqlite-connection.js';
import type { SqliteCheckpoints } from './sqlite-checkpoints.js';
import { createIndex } from './sqlite-indexes.js';

const upsertOf = ({ stmt }: SqliteConnection, collection: string) =>
  stmt(
    `INSERT INTO ${table(collection)} (id, doc) VALUES (?, jsonb(?))
     ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`,
  );

function writeDoc(conn: SqliteConnection, collection: string, id: string, doc: Doc): void {
  upsertOf(conn, collection).run(id, JSON.stringify(doc));
}

/** Whether document `id` exists and matches `when`, inside the current transaction. */
function matches({ stmt }: SqliteConnection, collection: string, id: string, when: Filter | undefined): boolean {
  const where = compileFilter(when);
  return (
    stmt(`SELECT 1 FROM ${table(collection)} WHERE id = ? AND (${where.sql})`).get(id, ...where.params) !== undefined
  );
}

function commitPart(conn: SqliteConnection, checkpoints: SqliteCheckpoints, part: CheckpointedWrites): void {
  const { writes, checkpoint, position, expected, setAside } = part;
  if (expected !== undefined && !samePosition(checkpoints.get(checkpoint), expected))
    throw new CheckpointMoved(checkpoint);
  // A read model's writes come collection by collection: each one's statements are looked up once.
  let collection: string | undefined;
  let upsert!: Statement;
  let remove!: Statement;
  for (const w of writes) {
    if (w.collection !== collection) {
      collection = w.collection;
      upsert = upsertOf(conn, collection);
      remove = conn.stmt(`DELETE FROM ${table(collection)} WHERE id = ?`);
    }
    if (w.doc === null) remove.run(w.id);
    else upsert.run(w.id, JSON.stringify(w.doc));
  }
  checkpoints.setAside(checkpoint, setAside ?? []);
  checkpoints.save(checkpoint, position);
}

/** Read models' commits, and the conditional writes of single documents. */
export function documentWrites(conn: SqliteConnection, checkpoints: SqliteCheckpoints) {
  const { db, stmt, writing } = conn;
  return {
    commitAll: writing(
      db.transaction((parts: readonly CheckpointedWrites[], fence: Fence | undefined) => {
        if (fence && !matches(conn, fence.collection, fence.id, fence.when)) throw new FenceLost(fence);
        for (const part of parts) commitPart(conn, checkpoints, part);
      }),
    ),
    // Read, checked and written in one IMMEDIATE transaction: no other connection writes in between.
    update: writing(
      db.transaction((collection: string, id: string, u: Update): Doc | null => {
        const row = stmt(`SELECT json(doc) AS doc FROM ${table(collection)} WHERE id = ?`).get(id) as
          | { doc: string }
          | undefined;
        if (!row && !u.upsert) return null;
        if (row && u.when && !matches(conn, collection, id, u.when)) return null;
        const doc = applyUpdate(row ? (JSON.parse(row.doc) as Doc) : null, u);
        writeDoc(conn, collection, id, doc);
        return doc;
      }),
    ),
    remove: writing(
      db.transaction((collection: string, id: string, when: Filter | undefined): boolean => {
        const where = compileFilter(when);
        return (
          stmt(`DELETE FROM ${table(collection)} WHERE id = ? AND (${where.sql})`).run(id, ...where.params).changes > 0
        );
      }),
    ),
  };
}

/** Collections made, swapped in and dropped, with their checkpoints and set-aside events. */
export function collectionWrites(conn: SqliteConnection) {
  const { db, stmt, writing } = conn;
  const tableExists = (name: string): boolean =>
    stmt(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;
  return {
    promote: writing(
      db.transaction((source: string, target: string) => {
        if (source === target) throw new Error(`cannot promote ${source} onto itself`);
        if (!tableExists(source)) throw new Error(`no collection ${source}`);
        db.exec(`DROP TABLE IF EXISTS ${table(target)}`);
        db.exec(`ALTER TABLE ${table(source)} RENAME TO ${table(target)}`); // its indexes follow
        stmt('DELETE FROM checkpoints WHERE name = ?').run(target);
        stmt('UPDATE checkpoints SET name = ? WHERE name = ?').run(target, source);
        stmt(`DELETE FROM ${SET_ASIDE} WHERE checkpoint = ?`).run(target);
        stmt(`UPDATE ${SET_ASIDE} SET checkpoint = ? WHERE checkpoint = ?`).run(target, source);
      }),
    ),
    clearSetAside: writing(
      db.transaction(
        (checkpoint: string, key: string): boolean =>
          stmt(`DELETE FROM ${SET_ASIDE} WHERE checkpoint = ? AND position = ?`).run(checkpoint, key).changes > 0,
      ),
    ),
    drop: writing(
      db.transaction((name: string) => {
        db.exec(`DROP TABLE IF EXISTS ${table(name)}`);
        stmt('DELETE FROM checkpoints WHERE name = ?').run(name);
        stmt(`DELETE FROM ${SET_ASIDE} WHERE checkpoint = ?`).run(name);
      }),
    ),
    ensureCollection: writing(
      db.transaction((name: string, indexes: readonly IndexSpec[]) => {
        db.exec(`CREATE TABLE IF NOT EXISTS ${table(name)} (id TEXT PRIMARY KEY, doc BLOB NOT NULL)`);
        for (const fields of indexes) createIndex(conn, name, fields);
      }),
    ),
  };
}
