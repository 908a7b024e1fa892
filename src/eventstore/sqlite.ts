/**
 * The embedded event store: one SQLite table, a global position (the row id) and
 * UNIQUE(stream, revision). SQLite has one writer, so the order of positions is the order of
 * commits and a subscriber never skips an event that commits late.
 */
import { EventEmitter } from 'node:events';
import Database from 'better-sqlite3';
import {
  ConcurrencyError,
  type AppendResult,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type Position,
  type ReadStreamOptions,
  type RecordedEvent,
  START,
} from './port.js';
import { checkpointFromThread } from '../sqlite-checkpointer.js';
import { isLockBusy, lockRetryPause, mayRetryLock, turnSnapshot } from '../sqlite-snapshot.js';
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

interface PendingAppend {
  stream: string;
  events: EventToAppend[];
  expected: ExpectedRevision;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

/**
 * Our own appends wake subscribers at once; another process's are seen by watching the database's
 * `data_version` (it changes when another connection commits), every few milliseconds while
 * anyone subscribes: a command answered by another process waits on our projector seeing it.
 */
const FOREIGN_WRITER_POLL_MS = 4;
/** Subscribers look again this often whatever the watch says. */
const SUBSCRIBER_FALLBACK_MS = 1000;

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });

const toRecorded = (row: Row): RecordedEvent => ({
  id: row.id,
  stream: row.stream,
  revision: BigInt(row.revision),
  position: at(row.position),
  type: row.type,
  data: JSON.parse(row.data),
  metadata: JSON.parse(row.metadata),
});

export function openSqliteEventStore(file: string): EventStore {
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

  const currentRevision = db.prepare<[string], { revision: number | null }>(
    'SELECT max(revision) AS revision FROM events WHERE stream = ?',
  );
  const insert = db.prepare(
    'INSERT INTO events (id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)',
  );
  // A bound LIMIT makes SQLite compile the statement again on every run (it plans with the
  // value), about three times the cost of these lookups, so whole-stream reads (every command's)
  // have statements without one.
  const readForwards = db.prepare<[string, number], Row>(
    'SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision',
  );
  const readForwardsLimited = db.prepare<[string, number, number], Row>(
    'SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?',
  );
  const readBackwards = db.prepare<[string, number], Row>(
    'SELECT * FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC',
  );
  const readBackwardsLimited = db.prepare<[string, number, number], Row>(
    'SELECT * FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?',
  );
  const readAfter = db.prepare<[number, number], Row>(
    'SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?',
  );
  // Types filtered inside SQLite: skipped rows are never copied out nor JSON-parsed.
  const readAfterOfTypes = db.prepare<[number, string, number], Row>(
    'SELECT * FROM events WHERE position > ? AND type IN (SELECT value FROM json_each(?)) ORDER BY position LIMIT ?',
  );
  const head = db.prepare<[], { position: number | null }>('SELECT max(position) AS position FROM events');

  const { read, writing, end: endRead } = turnSnapshot(db);
  // A commit never copies the log back into the file (and fsyncs it): a thread does.
  const checkpointer = checkpointFromThread(db, file, endRead);
  const appended = new EventEmitter();
  appended.setMaxListeners(0);

  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  let watchers = 0;
  let watch: NodeJS.Timeout | undefined;
  let seenVersion: unknown;
  /** While anyone subscribes: wakes subscribers when another connection has committed. */
  const watchForeignWriters = (on: boolean): void => {
    watchers += on ? 1 : -1;
    if (watchers > 0 && !watch) {
      watch = setInterval(() => {
        // A read transaction still open would show the version it began with.
        endRead();
        const version = dataVersion.get();
        if (version !== seenVersion) {
          seenVersion = version;
          appended.emit('appended');
        }
      }, FOREIGN_WRITER_POLL_MS);
      watch.unref();
    } else if (watchers === 0 && watch) {
      clearInterval(watch);
      watch = undefined;
    }
  };

  function appendOne({ stream, events, expected }: PendingAppend): AppendResult {
    const current = currentRevision.get(stream)?.revision ?? null;
    const actual = current === null ? 'no_stream' : BigInt(current);
    const holds =
      expected === 'any' ||
      (expected === 'no_stream' && current === null) ||
      (expected === 'stream_exists' && current !== null) ||
      (typeof expected === 'bigint' && current !== null && BigInt(current) === expected);
    if (!holds) throw new ConcurrencyError(stream, expected, actual);
    let revision = current ?? -1;
    let position = 0;
    for (const e of events) {
      revision += 1;
      const info = insert.run(e.id, stream, revision, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata));
      position = Number(info.lastInsertRowid);
    }
    return { nextRevision: BigInt(revision), position: events.length ? at(position) : START };
  }

  // Group commit: appends that arrive in the same turn of the event loop share one transaction
  // (one fsync); each runs in its own savepoint so a conflict fails that append alone.
  let pending: PendingAppend[] = [];
  const appendSavepoint = db.transaction(appendOne);
  const commitGroup = writing(
    db.transaction((group: PendingAppend[]) =>
      group.map((p) => {
        try {
          return { ok: true as const, result: appendSavepoint(p) };
        } catch (error) {
          return { ok: false as const, error };
        }
      }),
    ),
  );

  /** Since when the group waiting to commit has found the write lock taken (null: it has not). */
  let busySince: number | null = null;
  let busyTries = 0;
  let retry: NodeJS.Timeout | undefined;

  function flush(): void {
    retry = undefined;
    const group = pending;
    pending = [];
    let outcomes: ReturnType<typeof commitGroup>;
    try {
      outcomes = commitGroup(group);
    } catch (error) {
      busySince ??= performance.now();
      if (isLockBusy(error) && mayRetryLock(busySince)) {
        // Another process is writing: wait for the lock without stalling, gathering what comes meanwhile.
        pending = group.concat(pending);
        retry = setTimeout(flush, lockRetryPause(busyTries++));
        return;
      }
      [busySince, busyTries] = [null, 0];
      for (const p of group) p.reject(error);
      return;
    }
    [busySince, busyTries] = [null, 0];
    for (const [i, o] of outcomes.entries()) {
      if (o.ok) group[i]!.resolve(o.result);
      else group[i]!.reject(o.error);
    }
    appended.emit('appended');
  }

  async function* subscribe(after: Position, signal: AbortSignal, batchSize = 1000) {
    let position = Number(after.commit);
    watchForeignWriters(true);
    try {
      while (!signal.aborted) {
        const rows = read(() => readAfter.all(position, batchSize));
        if (rows.length > 0) {
          position = rows[rows.length - 1]!.position;
          yield rows.map(toRecorded);
          continue;
        }
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            appended.off('appended', done);
            signal.removeEventListener('abort', done);
            resolve();
          };
          const timer = setTimeout(done, SUBSCRIBER_FALLBACK_MS);
          appended.on('appended', done);
          signal.addEventListener('abort', done);
        });
      }
    } finally {
      watchForeignWriters(false);
    }
  }

  return {
    append(stream, events, expected) {
      return new Promise((resolve, reject) => {
        if (pending.length === 0 && !retry) setImmediate(flush);
        pending.push({ stream, events, expected, resolve, reject });
      });
    },

    async readStream(stream, { direction, fromRevision, maxCount }: ReadStreamOptions = {}) {
      const backwards = direction === 'backwards';
      const from = Number(fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0));
      const rows = read(() =>
        maxCount === undefined
          ? (backwards ? readBackwards : readForwards).all(stream, from)
          : (backwards ? readBackwardsLimited : readForwardsLimited).all(stream, from, maxCount),
      );
      return rows.map(toRecorded);
    },

    async readAll(after, maxCount, types) {
      const rows = read(() =>
        types
          ? readAfterOfTypes.all(Number(after.commit), JSON.stringify(types), maxCount)
          : readAfter.all(Number(after.commit), maxCount),
      );
      return rows.map(toRecorded);
    },

    subscribe,

    async headPosition() {
      const position = read(() => head.get())?.position;
      return position == null ? START : at(position);
    },

    async close() {
      clearTimeout(retry);
      retry = undefined;
      while (pending.length) {
        flush();
        if (retry) {
          clearTimeout(retry);
          retry = undefined;
          await new Promise((r) => setTimeout(r, lockRetryPause(busyTries)));
        }
      }
      clearInterval(watch);
      endRead();
      await checkpointer.stop();
      db.close();
    },
  };
}
