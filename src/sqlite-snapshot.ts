/**
 * Reads on a SQLite connection share one snapshot per turn of the event loop. The first read opens
 * a read transaction; it closes when the turn is over (setImmediate), before the connection
 * writes, or once it is MAX_AGE_MS old (a loop that only awaits settled promises never ends its
 * turn). A statement in a transaction of its own pays for taking and releasing the WAL read lock
 * and checking the file size: three system calls, most of the cost of a read by id here.
 * So a connection's reads see its own writes at once, and other connections' commits from its
 * next turn on.
 */
import type Database from 'better-sqlite3';

const MAX_AGE_MS = 100;

export interface TurnSnapshot {
  read<R>(query: () => R): R;
  /**
   * `write`, run after the snapshot is closed, so that it begins on the newest state, and begun
   * IMMEDIATE: a transaction that reads before it writes and finds the write lock taken (by
   * another process, or a checkpoint holding writers back) fails at once, as SQLite waits on a
   * busy lock only for a transaction's first one.
   */
  writing<F extends (...args: never[]) => unknown>(
    write: Database.Transaction<F>,
  ): Database.Transaction<F>['immediate'];
  /** Before closing the connection. */
  end(): void;
}

export function turnSnapshot(db: Database.Database): TurnSnapshot {
  let openedAt = 0;
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
        return write.immediate(...args);
      },
    end,
  };
}
