/**
 * Copies a database's write-ahead log back into its file from a thread of its own. Left to the
 * writing connection (SQLite's default), a checkpoint stalls the commit that triggers it while it
 * writes pages all over a large file and fsyncs it, and every request waiting on the projector
 * waits with it. A PASSIVE checkpoint on another connection runs beside commits and never blocks
 * them.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const INTERVAL_MS = 500;

// Plain CommonJS, so that the thread runs the same under tsx, vitest and a build.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 5000 });
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
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

/** Starts checkpointing `file`; `onFailure` runs if the thread dies (the caller checkpoints again). */
export function startCheckpointer(file: string, onFailure: (error: Error) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, workerData: { file, driver, intervalMs: INTERVAL_MS } });
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
