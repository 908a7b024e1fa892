/**
 * The embedded event store's table: one row per event, a global position (the row id) and
 * UNIQUE(stream, revision); the file's settings, and the statements that read and write it.
 */
import Database from 'better-sqlite3';
import type { Position, RecordedEvent } from './port.js';
import { ownerOnlySqliteFile } from '../owner-only.js';

interface Row {
  position: number;
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
}

const REACTOR = "json_extract(metadata, '$.reaction.reactor')";

export const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });

export const toRecorded = (row: Row): RecordedEvent => ({
  id: row.id,
  stream: row.stream,
  revision: BigInt(row.revision),
  position: at(row.position),
  type: row.type,
  data: JSON.parse(row.data),
  metadata: JSON.parse(row.metadata),
});

export function openEventsDatabase(file: string): Database.Database {
  ownerOnlySqliteFile(file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // An acknowledged event survives a crash of the process and of the machine.
  db.pragma('synchronous = FULL');
  // Opening waits for locks (another process creating the schema); writes later never do (sqlite-snapshot).
  db.pragma('busy_timeout = 5000');
  db.exec(`
    CREATE TABLE IF NOT EXISTS events (
      position INTEGER PRIMARY KEY,
      id       TEXT NOT NULL,
      stream   TEXT NOT NULL,
      revision INTEGER NOT NULL,
      type     TEXT NOT NULL,
      data     TEXT NOT NULL,
      metadata TEXT NOT NULL,
      UNIQUE (stream, revision)
    )`);
  // The events reactors appended, by reactor: a reactor without a checkpoint finds its last one
  // at once (a one-time build over an older log). Partial: other events cost nothing more.
  db.exec(`
    CREATE INDEX IF NOT EXISTS events_by_reactor ON events (${REACTOR}, position)
      WHERE ${REACTOR} IS NOT NULL`);
  return db;
}

export function eventStatements(db: Database.Database) {
  return {
    currentRevision: db.prepare<[string], { revision: number | null }>(
      'SELECT max(revision) AS revision FROM events WHERE stream = ?',
    ),
    insert: db.prepare('INSERT INTO events (id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)'),
    // A bound LIMIT makes SQLite compile the statement again on every run (it plans with the
    // value), about three times the cost of these lookups, so whole-stream reads (every command's)
    // have statements without one.
    readForwards: db.prepare<[string, number], Row>(
      'SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision',
    ),
    readForwardsLimited: db.prepare<[string, number, number], Row>(
      'SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?',
    ),
    readBackwards: db.prepare<[string, number], Row>(
      'SELECT * FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC',
    ),
    readBackwardsLimited: db.prepare<[string, number, number], Row>(
      'SELECT * FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?',
    ),
    readAfter: db.prepare<[number, number], Row>('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?'),
    // Types filtered inside SQLite: skipped rows are never copied out nor JSON-parsed.
    readAfterOfTypes: db.prepare<[number, string, number], Row>(
      'SELECT * FROM events WHERE position > ? AND type IN (SELECT value FROM json_each(?)) ORDER BY position LIMIT ?',
    ),
    lastReaction: db.prepare<[string], { metadata: string }>(
      `SELECT metadata FROM events WHERE ${REACTOR} = ? ORDER BY position DESC LIMIT 1`,
    ),
    head: db.prepare<[], { position: number | null }>('SELECT max(position) AS position FROM events'),
  };
}

export type EventStatements = ReturnType<typeof eventStatements>;
