/**
 * `shopfloor backup <dir>`: one consistent snapshot of the embedded store while the server runs.
 * The event log is copied by `VACUUM INTO`, one statement in one read transaction: WAL lets the
 * server's writers go on meanwhile, and the copy is the log as of that transaction. (SQLite's
 * online backup from another process restarts whenever the source changes and may never finish
 * under steady writes.) The reactors' checkpoints are read before it, so they are never ahead of
 * the copy; the blobs and keys are copied after it, so every blob and key an event in the copy
 * names is there (both are written before the event that names them). The read models are not
 * copied: a restore rebuilds them from the log.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { DocumentStore } from '../readstore/port.js';
import { reactorCheckpoint } from '../projector/reactor.js';
import {
  copyOwnerOnly,
  EVENTS_FILE,
  type FileEntry,
  MANIFEST,
  mustBeEmpty,
  newManifest,
  sha256Of,
} from './manifest.js';
import { filesUnder } from './manifest.js';
import { putOwn } from '../own-keys.js';

/** What DATA_DIR holds that a backup leaves out: the databases (copied by SQLite, or rebuilt) and files being written. */
const LEFT_OUT = /^(events\.db|read\.db)(-wal|-shm|-journal)?$|\.tmp$/;

const VERSION = (
  JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** The log copied into `target` by VACUUM INTO; returns the position of its newest event. */
function snapshotLog(dataDir: string, target: string): bigint {
  const source = new Database(path.join(dataDir, EVENTS_FILE), { readonly: true, fileMustExist: true });
  try {
    source.prepare('VACUUM INTO ?').run(target);
  } finally {
    source.close();
  }
  fs.chmodSync(target, 0o600);
  const copy = new Database(target, { readonly: true });
  try {
    const row = copy.prepare('SELECT max(position) AS head FROM events').get() as { head: number | null };
    return BigInt(row.head ?? -1);
  } finally {
    copy.close();
  }
}

export interface BackupResult {
  logPosition: bigint;
  files: FileEntry[];
}

export async function backup(
  dataDir: string,
  target: string,
  docs: DocumentStore,
  reactors: readonly string[],
  now: () => Date = () => new Date(),
): Promise<BackupResult> {
  mustBeEmpty(target, 'the backup directory');
  fs.mkdirSync(target, { recursive: true, mode: 0o700 });
  fs.chmodSync(target, 0o700);
  const checkpoints: Record<string, string> = {};
  for (const name of reactors) {
    const at = await docs.readCheckpoint(reactorCheckpoint({ name }));
    if (at) putOwn(checkpoints, name, at.commit.toString());
  }
  const logPosition = snapshotLog(dataDir, path.join(target, EVENTS_FILE));
  const eventsFile = path.join(target, EVENTS_FILE);
  const files: FileEntry[] = [
    { path: EVENTS_FILE, bytes: fs.statSync(eventsFile).size, sha256: await sha256Of(eventsFile) },
  ];
  for (const relative of filesUnder(dataDir, (r) => LEFT_OUT.test(r)))
    files.push(await copyOwnerOnly(path.join(dataDir, relative), path.join(target, relative), relative));
  const manifest = newManifest({
    shopfloor_version: VERSION,
    created_at: now().toISOString(),
    log_position: logPosition.toString(),
    reactor_checkpoints: checkpoints,
    files,
  });
  fs.writeFileSync(path.join(target, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return { logPosition, files };
}
