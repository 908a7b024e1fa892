/**
 * A history as a server leaves it: the generated log (seed.ts) after a real server's reactors have
 * passed it once and appended their effects (the cost ledger's entries, say), each recording its
 * reactor and cause. Cached beside the plain log; made once, with the reactors' slow first pass.
 * Every workload that serves a generated history starts on this one, so that what it measures is
 * not the reactors' first pass over a log that never met them (workload 5b measures that pass).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { HistoryInfo, HistoryKind } from './history.js';
import { log } from './measure.js';
import { cachedHistory, copyHistory } from './seed.js';
import { startServer } from './server.js';
import { tempDir } from './tmp.js';
import type { HistoryMaking } from './workload.js';

export async function cachedReactedHistory(
  kind: HistoryKind,
  size: number,
  tasks?: number,
): Promise<{ file: string; info: HistoryInfo; events: number }> {
  const { file: plain, info } = await cachedHistory(kind, size, tasks);
  // Named after the plain log, so a new generator's logs replace it (seed.ts removes stale ones).
  const file = `${plain}.reacted.db`;
  if (!fs.existsSync(file)) {
    const dir = tempDir('reacting');
    copyHistory(plain, dir);
    log(
      `passing the ${kind} history of ${size.toLocaleString('en-US')} through a server's reactors once, into ${path.basename(file)}`,
    );
    process.send?.({ making: true } satisfies HistoryMaking);
    const server = await startServer(dir, 'server-reacting', 3_600_000);
    log(`read models ${server.readyMs.toFixed(0)} ms, reactors ${server.reactorsMs.toFixed(0)} ms more`);
    await server.proc.stop(30_000);
    const db = new Database(path.join(dir, 'events.db'));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    fs.copyFileSync(path.join(dir, 'events.db'), `${file}.tmp`);
    fs.renameSync(`${file}.tmp`, file);
    process.send?.({ making: false } satisfies HistoryMaking);
  }
  const db = new Database(file, { readonly: true });
  const events = db.prepare('SELECT max(position) FROM events').pluck().get() as number;
  db.close();
  return { file, info, events };
}
