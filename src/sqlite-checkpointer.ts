/**
 * Copies a database's write-ahead log back into its file from a thread of its own. Left to the
 * writing connection (SQLite's default), a checkpoint stalls the commit that triggers it while it
 * writes pages all over a large file and fsyncs it, and every request waiting on the projector
 * waits with it. A PASSIVE checkpoint on another connection runs beside commits and never blocks
 * them.
 *
 * But the log only starts over when a writer begins on a log wholly copied back, and under a
 * steady stream of commits the thread never finishes before the next one: the log grows without
 * end, and every frame appended to a growing file costs the committing thread a fresh block
 * (zeroed by the kernel). So once the log is long and the thread has copied nearly all of it, the
 * writing connection copies the last few frames itself, between two of its writes; its next
 * commit starts the log over. (A RESTART checkpoint from the thread would do it too, but it holds
 * writers back, and a writer waiting on SQLite's busy handler sleeps in steps of 1, 2, 5 ms...:
 * it raised the p99 of task updates from about 65 to 80 ms.)
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

const INTERVAL_MS = 500;
/** A long log, to be started over: SQLite's own threshold for a checkpoint, 1,000 pages (4 MiB). */
const LONG_LOG_FRAMES = 1000;
/** PASSIVE passes the thread makes, until at most this many frames are left for the writer. */
const FEW_FRAMES = 64;
const MAX_PASSES = 5;
/** The log file kept when the log starts over (cut back to this; its blocks are reused): 64 MiB. */
const WAL_KEPT_BYTES = 64 * 1024 * 1024;

// Plain CommonJS, so that the thread runs the same under tsx, vitest and a build.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 5000 });
// A checkpoint syncs the database file before the log may be started over (not so with OFF).
db.pragma('synchronous = NORMAL');
const passive = () => db.pragma('wal_checkpoint(PASSIVE)')[0];
const checkpoint = () => {
  try {
    let { log, checkpointed } = passive();
    if (log < workerData.longLogFrames) return;
    for (let pass = 1; log - checkpointed > workerData.fewFrames && pass < workerData.maxPasses; pass++) ({ log, checkpointed } = passive());
    if (log - checkpointed <= workerData.fewFrames) parentPort.postMessage('finish');
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

/**
 * Hands the checkpoints of `db`, a connection to `file` in WAL mode, to a thread; stop it before
 * closing `db`. `endRead` ends the connection's open read, if any, before it copies the last frames.
 */
export function checkpointFromThread(db: Database.Database, file: string, endRead: () => void): Checkpointer {
  db.pragma('wal_autocheckpoint = 0');
  db.pragma(`journal_size_limit = ${WAL_KEPT_BYTES}`);
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const workerData = {
    file,
    driver,
    intervalMs: INTERVAL_MS,
    longLogFrames: LONG_LOG_FRAMES,
    fewFrames: FEW_FRAMES,
    maxPasses: MAX_PASSES,
  };
  const worker = new Worker(THREAD, { eval: true, workerData });
  worker.unref();
  worker.on('message', () => {
    try {
      endRead();
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy: the thread asks again at its next tick.
    }
  });
  // If the thread dies, commits checkpoint again, as by default.
  worker.once('error', () => db.pragma(`wal_autocheckpoint = ${LONG_LOG_FRAMES}`));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      worker.ref(); // or a process with nothing else to do would exit before the thread has
      worker.postMessage('stop');
      await exited;
    },
  };
}
