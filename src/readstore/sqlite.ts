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
import Database from 'better-sqlite3';
import type { Position } from '../eventstore/port.js';
import {
  CheckpointMoved,
  FenceLost,
  samePosition,
  type CheckpointedWrites,
  type Collection,
  type Doc,
  type DocumentStore,
  type Fence,
  type Filter,
  type FindQuery,
  type IndexSpec,
  type Page,
  type Scalar,
  type Update,
} from './port.js';
import { applyUpdate, checkUpdate } from './update.js';
import {
  assertCollectionName,
  compileAfterSteps,
  compileFilter,
  compileOrderBy,
  indexFields,
  orderingIndex,
  indexColumns,
  indexName,
  LOWER,
  quoteIdentifier as q,
  type Sql,
  type SqlValue,
} from './sqlite-filter.js';
import { decodeSetAside, encodeSetAside, SET_ASIDE, type StoredSetAside } from './set-aside.js';
import { checkpointFromThread } from '../sqlite-checkpointer.js';
import { turnSnapshot, whenUnlocked } from '../sqlite-snapshot.js';
import { ownerOnlySqliteFile } from '../owner-only.js';
import { own } from '../own-keys.js';

interface DocRow {
  id: string;
  doc: string;
}
interface CheckpointRow {
  name: string;
  commit_pos: string;
  prepare_pos: string;
}

/** Scans read in pages so that no read stays open across an await (it would block every write). */
const SCAN_PAGE = 500;
/** Prepared statements are kept by SQL text; filters with varying `$in` sizes make new texts. */
const STATEMENT_CACHE_LIMIT = 500;

const toPosition = (row: CheckpointRow): Position => ({
  commit: BigInt(row.commit_pos),
  prepare: BigInt(row.prepare_pos),
});

/** The sort-key value of a document; `id` is the document id, a missing field is null. */
function sortKeyValue(id: string, doc: Doc, path: string): Scalar {
  if (path === 'id') return id;
  let value: unknown = doc;
  for (const segment of path.split('.')) {
    value = value !== null && typeof value === 'object' ? own(value as Doc, segment) : undefined;
  }
  if (value === undefined || value === null) return null;
  if (['string', 'number', 'boolean'].includes(typeof value)) return value as Scalar;
  throw new Error(`sort key ${path} of ${id} is not a scalar`);
}

export function openSqliteDocumentStore(file: string): DocumentStore {
  ownerOnlySqliteFile(file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // Read models can be rebuilt from the event log, so losing the last commits on power loss is fine.
  db.pragma('synchronous = NORMAL');
  // Opening waits for locks (another process creating the schema); writes later never do (sqlite-snapshot).
  db.pragma('busy_timeout = 5000');
  // Documents keyed by random uuids touch pages all over the file: keep a working set in memory.
  db.pragma('cache_size = -65536');
  db.function(LOWER, { deterministic: true }, (s: unknown) =>
    typeof s === 'string' ? s.toLowerCase() : (s as SqlValue),
  );
  db.exec(`
    CREATE TABLE IF NOT EXISTS checkpoints (
      name        TEXT PRIMARY KEY,
      commit_pos  TEXT NOT NULL,
      prepare_pos TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS ${SET_ASIDE} (
      checkpoint TEXT NOT NULL,
      position   TEXT NOT NULL,
      event      TEXT NOT NULL,
      PRIMARY KEY (checkpoint, position)
    ) WITHOUT ROWID`);

  const statements = new Map<string, Database.Statement>();
  const stmt = (sql: string): Database.Statement => {
    let s = statements.get(sql);
    if (!s) {
      if (statements.size >= STATEMENT_CACHE_LIMIT) statements.clear();
      s = db.prepare(sql);
      statements.set(sql, s);
    }
    return s;
  };
  const { read, writing, end: endRead } = turnSnapshot(db);
  // The log is copied back into the file by a thread of its own, never by a commit.
  const checkpointer = checkpointFromThread(db, file, endRead);

  const table = (name: string): string => {
    assertCollectionName(name);
    return q(name);
  };

  /**
   * Indexes are found by their table and columns, never by name: SQLite cannot rename an index, so
   * a promoted shadow keeps the names it was built with (building them again under the target's
   * names cost as much as the rebuild's own index build). A name only has to be free.
   */
  const createIndex = (collection: string, fields: IndexSpec): void => {
    if (fields.length === 0) throw new Error('an index needs at least one field');
    const columns = `(${indexColumns(fields)})`;
    const existing = stmt(`SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?`).all(collection) as {
      sql: string | null;
    }[];
    if (existing.some(({ sql }) => sql?.endsWith(columns))) return;
    const base = indexName(collection, fields);
    let name = base;
    for (let n = 2; stmt('SELECT 1 FROM sqlite_master WHERE name = ?').get(name); n++) name = `${base}#${n}`;
    db.exec(`CREATE INDEX ${q(name)} ON ${table(collection)} ${columns}`);
  };

  const tableExists = (name: string): boolean =>
    stmt(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;

  const saveCheckpoint = (name: string, position: Position): void => {
    stmt(
      `INSERT INTO checkpoints (name, commit_pos, prepare_pos) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET commit_pos = excluded.commit_pos, prepare_pos = excluded.prepare_pos`,
    ).run(name, position.commit.toString(), position.prepare.toString());
  };

  const readCheckpoint = (name: string): Position | null => {
    const row = stmt('SELECT * FROM checkpoints WHERE name = ?').get(name) as CheckpointRow | undefined;
    return row ? toPosition(row) : null;
  };

  const commitPart = ({ writes, checkpoint, position, expected, setAside }: CheckpointedWrites): void => {
    if (expected !== undefined && !samePosition(readCheckpoint(checkpoint), expected))
      throw new CheckpointMoved(checkpoint);
    for (const w of writes) {
      if (w.doc === null) {
        stmt(`DELETE FROM ${table(w.collection)} WHERE id = ?`).run(w.id);
      } else {
        stmt(
          `INSERT INTO ${table(w.collection)} (id, doc) VALUES (?, jsonb(?))
           ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`,
        ).run(w.id, JSON.stringify(w.doc));
      }
    }
    for (const e of setAside ?? []) {
      const stored = encodeSetAside(e);
      stmt(
        `INSERT INTO ${SET_ASIDE} (checkpoint, position, event) VALUES (?, ?, ?)
         ON CONFLICT (checkpoint, position) DO UPDATE SET event = excluded.event`,
      ).run(checkpoint, stored.key, JSON.stringify(stored));
    }
    saveCheckpoint(checkpoint, position);
  };
  /** Whether document `id` exists and matches `when`, inside the current transaction. */
  const matches = (collection: string, id: string, when: Filter | undefined): boolean => {
    const where = compileFilter(when);
    return (
      stmt(`SELECT 1 FROM ${table(collection)} WHERE id = ? AND (${where.sql})`).get(id, ...where.params) !== undefined
    );
  };

  const commitAll = writing(
    db.transaction((parts: readonly CheckpointedWrites[], fence: Fence | undefined) => {
      if (fence && !matches(fence.collection, fence.id, fence.when)) throw new FenceLost(fence);
      parts.forEach(commitPart);
    }),
  );

  // Read, checked and written in one IMMEDIATE transaction: no other connection writes in between.
  const update = writing(
    db.transaction((collection: string, id: string, u: Update): Doc | null => {
      const row = stmt(`SELECT json(doc) AS doc FROM ${table(collection)} WHERE id = ?`).get(id) as DocRow | undefined;
      if (!row && !u.upsert) return null;
      if (row && u.when && !matches(collection, id, u.when)) return null;
      const doc = applyUpdate(row ? (JSON.parse(row.doc) as Doc) : null, u);
      stmt(
        `INSERT INTO ${table(collection)} (id, doc) VALUES (?, jsonb(?))
         ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`,
      ).run(id, JSON.stringify(doc));
      return doc;
    }),
  );

  const remove = writing(
    db.transaction((collection: string, id: string, when: Filter | undefined): boolean => {
      const where = compileFilter(when);
      return (
        stmt(`DELETE FROM ${table(collection)} WHERE id = ? AND (${where.sql})`).run(id, ...where.params).changes > 0
      );
    }),
  );

  const promote = writing(
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
  );

  const drop = writing(
    db.transaction((name: string) => {
      db.exec(`DROP TABLE IF EXISTS ${table(name)}`);
      stmt('DELETE FROM checkpoints WHERE name = ?').run(name);
      stmt(`DELETE FROM ${SET_ASIDE} WHERE checkpoint = ?`).run(name);
    }),
  );

  const ensureCollection = writing(
    db.transaction((name: string, indexes: readonly IndexSpec[]) => {
      db.exec(`CREATE TABLE IF NOT EXISTS ${table(name)} (id TEXT PRIMARY KEY, doc BLOB NOT NULL)`);
      for (const fields of indexes) createIndex(name, fields);
    }),
  );

  /** Each collection's indexes and their fields, read from the schema once (forgotten when the schema changes). */
  const indexCache = new Map<string, Array<{ name: string; fields: string[] }>>();
  const indexesOf = (collection: string): Array<{ name: string; fields: string[] }> => {
    let found = indexCache.get(collection);
    if (!found) {
      const rows = read(() =>
        stmt(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`).all(
          collection,
        ),
      ) as { name: string; sql: string }[];
      found = rows.flatMap(({ name, sql }) => {
        const fields = indexFields(sql);
        return fields ? [{ name, fields }] : [];
      });
      indexCache.set(collection, found);
    }
    return found;
  };

  function collection<T extends Doc>(name: string): Collection<T> {
    const from = table(name);
    const parse = (row: DocRow): T => JSON.parse(row.doc) as T;
    /**
     * The statements a find runs, in order, until the page is full: the first page is one; a next
     * page reads the steps after its cursor (compileAfterSteps). Each is read through the index
     * that gives the sort's order after the filter's pinned fields, when the collection has one
     * (`INDEXED BY`): SQLite's planner, without statistics, would rather filter through another
     * index and sort every match, which costs what the collection holds, not what the page does.
     */
    const statements = (query: FindQuery): Sql[] => {
      if (!Number.isInteger(query.limit) || query.limit < 1) throw new Error('limit must be a positive integer');
      if (query.sort.length === 0) throw new Error('find needs a sort');
      const where = compileFilter(query.filter);
      const index = orderingIndex(indexesOf(name), query.filter, query.sort);
      const source = index ? `${from} INDEXED BY ${q(index)}` : from;
      const select = (conditions: Sql[], order: string): Sql => {
        const all = [where, ...conditions];
        return {
          sql: `SELECT id, json(doc) AS doc FROM ${source} WHERE ${all.map((c) => `(${c.sql})`).join(' AND ')} ORDER BY ${order}`,
          params: all.flatMap((c) => c.params),
        };
      };
      if (!query.after) return [select([], compileOrderBy(query.sort))];
      return compileAfterSteps(query.sort, query.after).map((step) => select([step], step.orderBy));
    };

    /** One page of a find, read through the statements above. */
    const findPage = (query: FindQuery): Page<T> => {
      let rows: DocRow[] = [];
      for (const step of statements(query)) {
        // The limit is written into the SQL: SQLite plans with a bound LIMIT's value, so binding
        // one, even the same again, makes it compile the statement anew on every run (+6 µs).
        const sql = `${step.sql} LIMIT ${query.limit + 1 - rows.length}`;
        const found = read(() => stmt(sql).all(...step.params)) as DocRow[];
        rows = rows.length ? rows.concat(found) : found;
        if (rows.length > query.limit) break;
      }
      const more = rows.length > query.limit;
      const page = rows.slice(0, query.limit);
      const items = page.map(parse);
      const lastRow = page.at(-1);
      const last = items.at(-1);
      const next = more && lastRow && last ? query.sort.map(([path]) => sortKeyValue(lastRow.id, last, path)) : null;
      return { items, next };
    };

    return {
      async get(id) {
        const row = read(() => stmt(`SELECT id, json(doc) AS doc FROM ${from} WHERE id = ?`).get(id)) as
          | DocRow
          | undefined;
        return row ? parse(row) : null;
      },
      async getMany(ids) {
        if (ids.length === 0) return new Map();
        // One JSON parameter instead of one per id: no limit on the number of ids.
        const rows = read(() =>
          stmt(`SELECT id, json(doc) AS doc FROM ${from} WHERE id IN (SELECT value FROM json_each(?))`).all(
            JSON.stringify(ids),
          ),
        ) as DocRow[];
        return new Map(rows.map((row) => [row.id, parse(row)]));
      },
      async find(query: FindQuery): Promise<Page<T>> {
        try {
          return findPage(query);
        } catch (error) {
          // Another process (`projections retry` or `rebuild`) promoted a rebuilt collection, whose
          // indexes have other names: read them again.
          if (!/no such index/.test((error as Error).message)) throw error;
          indexCache.delete(name);
          return findPage(query);
        }
      },
      async explain(query: FindQuery): Promise<string[]> {
        return statements(query).flatMap((s) =>
          (
            read(() => stmt(`EXPLAIN QUERY PLAN ${s.sql} LIMIT ${query.limit + 1}`).all(...s.params)) as {
              detail: string;
            }[]
          ).map((row) => row.detail),
        );
      },
      async count(filter) {
        const where = compileFilter(filter);
        const row = read(() => stmt(`SELECT count(*) AS n FROM ${from} WHERE ${where.sql}`).get(...where.params)) as {
          n: number;
        };
        return row.n;
      },
      async *scan() {
        const first = stmt(`SELECT id, json(doc) AS doc FROM ${from} ORDER BY id LIMIT ${SCAN_PAGE}`);
        const following = stmt(`SELECT id, json(doc) AS doc FROM ${from} WHERE id > ? ORDER BY id LIMIT ${SCAN_PAGE}`);
        let after: string | null = null;
        for (;;) {
          const rows = read(() => (after === null ? first.all() : following.all(after))) as DocRow[];
          for (const row of rows) yield [row.id, parse(row)] as [string, T];
          const last = rows.at(-1);
          if (rows.length < SCAN_PAGE || !last) return;
          after = last.id;
        }
      },
    };
  }

  return {
    async update<T extends Doc>(collection: string, id: string, u: Update) {
      checkUpdate(u);
      return (await whenUnlocked(() => update(collection, id, u))) as T | null;
    },
    async remove(collection, id, when) {
      return whenUnlocked(() => remove(collection, id, when));
    },
    async ensureCollection(name, indexes) {
      await whenUnlocked(() => ensureCollection(name, indexes));
      indexCache.delete(name);
    },
    collection,
    async commit(writes, checkpoint, position, expected) {
      await whenUnlocked(() => commitAll([{ writes, checkpoint, position, expected }], undefined));
    },
    async commitAll(parts, fence) {
      await whenUnlocked(() => commitAll(parts, fence));
    },
    async readCheckpoint(name) {
      return read(() => readCheckpoint(name));
    },
    async listCheckpoints() {
      const rows = read(() => stmt('SELECT * FROM checkpoints ORDER BY name').all()) as CheckpointRow[];
      return rows.map((row) => ({ name: row.name, position: toPosition(row) }));
    },
    async listSetAside(checkpoint, limit) {
      // A bound LIMIT would compile the statement anew on every run: the number is checked and inlined.
      if (limit !== undefined && !(Number.isInteger(limit) && limit > 0))
        throw new Error('limit must be a positive integer');
      const where = checkpoint === undefined ? '' : 'WHERE checkpoint = ?';
      const rows = read(() =>
        stmt(
          `SELECT checkpoint, event FROM ${SET_ASIDE} ${where} ORDER BY checkpoint, position LIMIT ${limit ?? -1}`,
        ).all(...(checkpoint === undefined ? [] : [checkpoint])),
      ) as { checkpoint: string; event: string }[];
      return rows.map((row) => decodeSetAside(row.checkpoint, JSON.parse(row.event) as StoredSetAside));
    },
    async countSetAside() {
      const rows = read(() => stmt(`SELECT checkpoint, count(*) AS n FROM ${SET_ASIDE} GROUP BY checkpoint`).all()) as {
        checkpoint: string;
        n: number;
      }[];
      return new Map(rows.map((row) => [row.checkpoint, row.n]));
    },
    async promote(source, target) {
      await whenUnlocked(() => promote(source, target));
      statements.clear();
      indexCache.clear();
    },
    async drop(name) {
      await whenUnlocked(() => drop(name));
      statements.clear();
      indexCache.clear();
    },
    async listCollections() {
      const rows = read(() =>
        stmt(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('checkpoints', '${SET_ASIDE}')
           AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`,
        ).all(),
      ) as { name: string }[];
      return rows.map((row) => row.name);
    },
    async close() {
      endRead();
      statements.clear();
      await checkpointer.stop();
      db.close();
    },
  };
}
