/**
 * Reads on a SQLite connection share one snapshot per turn of the event loop. The first read opens
 * a read transaction; it closes when the turn is over (setImmediate), before the connection
 * writes, or once it is MAX_AGE_MS old (a loop that only awaits settled promises never ends its
 * turn). A statement in a transaction of its own pays for taking and releasing the WAL read lock
 * and checking the file size: three system calls, most of the cost of a read by id here.
 * So a connection's reads see its own writes at once, and other connections' commits from its
 * next turn on.
 *
 * Writes never wait for another connection's write lock inside SQLite: its busy handler sleeps the
 * calling thread, which is the event loop, so a process whose write found the lock taken (another
 * process of the store writing) would serve nothing until it got it. A write is tried without
 * waiting and fails at once with SQLITE_BUSY; `whenUnlocked` tries it again after yielding.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type Database from 'better-sqlite3';

const MAX_AGE_MS = 100;
/** Reads still wait this long for a lock (rare in WAL mode: a recovery, a log restart). */
const READ_BUSY_TIMEOUT_MS = 5000;
/** How long a write keeps trying for the write lock, as SQLite's busy timeout did. */
const WRITE_LOCK_TIMEOUT_MS = 5000;
const MAX_RETRY_PAUSE_MS = 8;

/** Whether `error` is a write that found the lock taken by another connection. */
export const isLockBusy = (error: unknown): boolean =>
  typeof (error as { code?: unknown })?.code === 'string' && (error as { code: string }).code.startsWith('SQLITE_BUSY');

/** The pause before the `attempt`th retry of a write that found the lock taken: 1, 1, 2, 2, 4, 4, 8, 8… ms. */
export const lockRetryPause = (attempt: number): number => Math.min(MAX_RETRY_PAUSE_MS, 2 ** Math.floor(attempt / 2));

/** Whether a write that first found the lock taken at `since` (performance.now()) may still try. */
export const mayRetryLock = (since: number): boolean => performance.now() - since < WRITE_LOCK_TIMEOUT_MS;

/** Runs `write` until it gets the write lock (yielding between tries), for at most the lock timeout. */
export async function whenUnlocked<R>(write: () => R): Promise<R> {
  const since = performance.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return write();
    } catch (error) {
      if (!isLockBusy(error) || !mayRetryLock(since)) throw error;
    }
    await delay(lockRetryPause(attempt));
  }
}

export interface TurnSnapshot {
  read<R>(query: () => R): R;
  /**
   * `write`, run after the snapshot is closed, so that it begins on the newest state, and begun
   * IMMEDIATE, without waiting: when another connection holds the write lock (another process, a
   * checkpoint holding writers back) it throws SQLITE_BUSY at once, before doing anything, for the
   * caller to try again (`whenUnlocked`) without stalling the event loop.
   */
  writing<F extends (...args: never[]) => unknown>(
    write: Database.Transaction<F>,
  ): Database.Transaction<F>['immediate'];
  /** Before closing the connection. */
  end(): void;
}

export function turnSnapshot(db: Database.Database): TurnSnapshot {
  let openedAt = 0;
  db.pragma(`busy_timeout = ${READ_BUSY_TIMEOUT_MS}`);
  const noWaiting = db.prepare('PRAGMA busy_timeout = 0');
  const waiting = db.prepare(`PRAGMA busy_timeout = ${READ_BUSY_TIMEOUT_MS}`);
  // Write transactions run whole within one call, so between calls an open transaction is a read.
  const end = (): void => {
    if (db.inTransaction) db.exec('COMMIT');
  };
  return {
    read(query) {
      if (db.inTransaction && performance.now() - openedAt > MAX_AGE_MS) end();
      if (!db.inTransaction) {
        db.exec('BEGIN');
        openedAt = performance.now();
        setImmediate(end);
      }
      return query();
    },
    writing:
      (write) =>
      (...args) => {
        end();
        noWaiting.get();
        try {
          return write.immediate(...args);
        } finally {
          waiting.get();
        }
      },
    end,
  };
}
