/**
 * The embedded document store's connection: the file opened with its settings and the tables of
 * its own, prepared statements kept by their text, the reads of a turn in one snapshot
 * (sqlite-snapshot) and the log copied back into the file by a thread (sqlite-checkpointer).
 */
import Database from 'better-sqlite3';
import { checkpointFromThread } from '../sqlite-checkpointer.js';
import { type TurnSnapshot, turnSnapshot } from '../sqlite-snapshot.js';
import { ownerOnlySqliteFile } from '../owner-only.js';
import { assertCollectionName, LOWER, quoteIdentifier, type SqlValue } from './sqlite-filter.js';
import { SET_ASIDE } from './set-aside.js';

/** Prepared statements are kept by SQL text; filters with varying `$in` sizes make new texts. */
const STATEMENT_CACHE_LIMIT = 500;
/** The connection's page cache, in KiB (SQLite's `cache_size` in its negative form). */
const PAGE_CACHE_KIB = 16 * 1024;

export interface SqliteConnection extends Pick<TurnSnapshot, 'read' | 'writing'> {
  db: Database.Database;
  /** The prepared statement of `sql`, kept by its text. */
  stmt(sql: string): Database.Statement;
  /** Forgets the kept statements: a table they name was renamed or dropped. */
  forgetStatements(): void;
  close(): Promise<void>;
}

/** A collection's table, quoted, once its name is checked. */
export const table = (name: string): string => {
  assertCollectionName(name);
  return quoteIdentifier(name);
};

function openDatabase(file: string): Database.Database {
  ownerOnlySqliteFile(file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // Read models can be rebuilt from the event log, so losing the last commits on power loss is fine.
  db.pragma('synchronous = NORMAL');
  // Opening waits for locks (another process creating the schema); writes later never do (sqlite-snapshot).
  db.pragma('busy_timeout = 5000');
  // Documents keyed by random uuids touch pages all over the file: keep the B-trees' inner pages and
  // a working set in memory (it counts in the server's RSS; 64 MiB cost 54 MiB more RSS for 5% less
  // CPU in a 200k-event catch-up; the operating system caches the file besides).
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
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
  return db;
}

export function openSqliteConnection(file: string): SqliteConnection {
  const db = openDatabase(file);
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
  return {
    db,
    stmt,
    forgetStatements: () => statements.clear(),
    read,
    writing,
    async close() {
      endRead();
      statements.clear();
      await checkpointer.stop();
      db.close();
    },
  };
}
