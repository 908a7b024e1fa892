/**
 * Copies a database's write-ahead log back into its file from a thread of its own. Left to the
 * writing connection (SQLite's default), a checkpoint stalls the commit that triggers it while it
 * writes pages all over a large file and fsyncs it, and every request waiting on the projector
 * waits with it. A PASSIVE checkpoint on another connection runs beside commits and never blocks
 * them. But under a steady stream of commits a PASSIVE checkpoint never finds the log wholly
 * copied at the moment a writer begins, so no writer ever starts the log over: it grows without
 * end, and every frame appended to a growing file costs the committing thread a fresh block
 * (zeroed by the kernel). So once the log is long, a RESTART checkpoint follows: it holds writers
 * back for the few frames committed since the PASSIVE one and until the readers' snapshots move
 * on (one turn of the event loop), and the next commit starts at the front of the file.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

const INTERVAL_MS = 500;
/** A long log, started over: SQLite's own threshold for an automatic checkpoint, 1,000 pages (4 MiB). */
const LONG_LOG_FRAMES = 1000;
/** The log file kept when the log starts over (cut back to this; its blocks are reused): 64 MiB. */
const WAL_KEPT_BYTES = 64 * 1024 * 1024;
/** How long the RESTART may hold writers back waiting for a reader, before it is retried next tick. */
const RESTART_WAIT_MS = 50;

// Plain CommonJS, so that the thread runs the same under tsx, vitest and a build.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 5000 });
// A checkpoint syncs the database file before the log may be started over (not so with OFF).
db.pragma('synchronous = NORMAL');
const restart = () => {
  db.pragma('busy_timeout = ' + workerData.restartWaitMs);
  try {
    db.pragma('wal_checkpoint(RESTART)');
  } finally {
    db.pragma('busy_timeout = 5000');
  }
};
const checkpoint = () => {
  try {
    const [{ log }] = db.pragma('wal_checkpoint(PASSIVE)');
    if (log >= workerData.longLogFrames) restart();
  } catch {
    // A busy or failing checkpoint is retried at the next tick; the log only grows meanwhile.
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Stops the thread and closes its connection. */
  stop(): Promise<void>;
}

/** Hands the checkpoints of `db`, a connection to `file` in WAL mode, to a thread; stop it before closing `db`. */
export function checkpointFromThread(db: Database.Database, file: string): Checkpointer {
  db.pragma('wal_autocheckpoint = 0');
  db.pragma(`journal_size_limit = ${WAL_KEPT_BYTES}`);
  // If the thread dies, commits checkpoint again, as by default.
  return startCheckpointer(file, () => db.pragma(`wal_autocheckpoint = ${LONG_LOG_FRAMES}`));
}

function startCheckpointer(file: string, onFailure: (error: Error) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, workerData: { file, driver, intervalMs: INTERVAL_MS, longLogFrames: LONG_LOG_FRAMES, restartWaitMs: RESTART_WAIT_MS } });
  worker.unref();
  worker.once('error', onFailure);
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      worker.ref(); // or a process with nothing else to do would exit before the thread has
      worker.postMessage('stop');
      await exited;
    },
  };
}
