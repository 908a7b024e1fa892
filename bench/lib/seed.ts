/**
 * Event logs written straight into the SQLite event store's table (the schema comes from
 * `openSqliteEventStore` itself), cached under bench/.cache by kind, size and generator source.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteEventStore } from '../../src/eventstore/sqlite.js';
import { CACHE_DIR } from './config.js';
import { type AnalyticsInfo, generateAnalyticsHistory } from './analytics-history.js';
import { generateHistory, type HistoryInfo, type HistoryKind, type HistoryRow } from './history.js';
import { log, timed } from './measure.js';

const INSERT_SQL = 'INSERT INTO events (id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)';

/** An empty event log with the schema of src/eventstore/sqlite.ts (WAL, synchronous FULL). */
export async function createEventsDb(file: string): Promise<void> {
  const store = openSqliteEventStore(file);
  await store.close();
}

/** Appends rows with plain inserts, `perTransaction` to a transaction, durability off (seeding only). */
export function insertRows(file: string, rows: Iterable<HistoryRow>, perTransaction = 20_000): number {
  const db = new Database(file);
  db.pragma('synchronous = OFF');
  const insert = db.prepare(INSERT_SQL);
  const write = db.transaction((chunk: HistoryRow[]) => {
    for (const r of chunk) insert.run(r.id, r.stream, r.revision, r.type, r.data, r.metadata);
  });
  let chunk: HistoryRow[] = [];
  let count = 0;
  for (const r of rows) {
    chunk.push(r);
    if (chunk.length >= perTransaction) {
      write(chunk);
      count += chunk.length;
      chunk = [];
    }
  }
  write(chunk);
  count += chunk.length;
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return count;
}

const generatorHash = (): string => {
  const hash = createHash('sha256');
  for (const f of ['history.ts', 'analytics-history.ts', 'seed.ts'])
    hash.update(fs.readFileSync(path.join(import.meta.dirname, f)));
  return hash.digest('hex').slice(0, 10);
};

const removeDb = (file: string) => {
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
};

/** The cached event log of a history (generated on first use) and what it contains; `tasks` for `tasks-runs`. */
export async function cachedHistory(
  kind: HistoryKind,
  size: number,
  tasks?: number,
): Promise<{ file: string; info: HistoryInfo }>;
export async function cachedHistory(kind: 'analytics', size: number): Promise<{ file: string; info: AnalyticsInfo }>;
export async function cachedHistory(
  kind: HistoryKind | 'analytics',
  size: number,
  tasks = 0,
): Promise<{ file: string; info: HistoryInfo }> {
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const prefix = `history-${kind}-${size}${tasks ? `-${tasks}` : ''}-`;
  const file = path.join(CACHE_DIR, `${prefix}${generatorHash()}.db`);
  const infoFile = `${file}.json`;
  // Logs of an older generator are never read again.
  for (const name of fs.readdirSync(CACHE_DIR)) {
    const stale = path.join(CACHE_DIR, name);
    if (name.startsWith(prefix) && !stale.startsWith(file)) fs.rmSync(stale, { force: true });
  }
  if (fs.existsSync(file) && fs.existsSync(infoFile)) {
    return { file, info: JSON.parse(fs.readFileSync(infoFile, 'utf8')) as HistoryInfo };
  }
  log(
    `generating the ${kind} history (${size.toLocaleString('en-US')}${tasks ? `, ${tasks.toLocaleString('en-US')} tasks` : ''}) into ${path.relative(process.cwd(), file)}`,
  );
  const tmp = `${file}.tmp`;
  removeDb(tmp);
  await createEventsDb(tmp);
  const info: Partial<HistoryInfo> = {};
  const rows = kind === 'analytics' ? generateAnalyticsHistory(size, info) : generateHistory(kind, size, info, tasks);
  const { ms } = await timed(() => insertRows(tmp, rows));
  log(`generated ${info.events!.toLocaleString('en-US')} events in ${(ms / 1000).toFixed(1)} s`);
  fs.writeFileSync(infoFile, JSON.stringify(info));
  removeDb(file);
  fs.renameSync(tmp, file);
  removeDb(tmp);
  return { file, info: info as HistoryInfo };
}

/** A private copy of a cached log as `<dir>/events.db`, so a workload may write to it. */
export function copyHistory(file: string, dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const target = path.join(dir, 'events.db');
  fs.copyFileSync(file, target);
  return target;
}
