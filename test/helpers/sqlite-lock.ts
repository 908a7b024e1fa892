import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// Another connection, on a thread of its own: this one's writes block while it holds the lock.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.exec('BEGIN IMMEDIATE');
parentPort.postMessage('locked');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.ms);
db.exec('COMMIT');
db.close();
`;

/** Takes the write lock of the SQLite database `file` for `ms` from another connection; resolves once it is taken. */
export async function holdWriteLock(file: string, ms: number): Promise<{ released: Promise<void> }> {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, workerData: { file, driver, ms } });
  const released = new Promise<void>((resolve, reject) => {
    worker.once('exit', () => resolve());
    worker.once('error', reject);
  });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  return { released };
}
