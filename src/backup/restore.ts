/**
 * `shopfloor restore <dir>`: checks every file of a backup against its manifest, copies them into
 * an empty DATA_DIR (refusing one that holds anything), rebuilds every read model from the log,
 * and sets each reactor where it was when the backup was taken: it makes again, idempotently, any
 * reaction it had not made by then.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { EventStore } from '../eventstore/port.js';
import type { AnyProjection } from '../projector/projection.js';
import { reactorCheckpoint } from '../projector/reactor.js';
import { rebuildProjections } from '../projector/rebuild.js';
import type { DocumentStore } from '../readstore/port.js';
import { copyOwnerOnly, type Manifest, mustBeEmpty, readManifest, sha256Of } from './manifest.js';

/** Throws, naming the file, unless every file of the manifest is there with its size and checksum. */
export async function checkBackup(dir: string): Promise<Manifest> {
  const manifest = readManifest(dir);
  for (const f of manifest.files) {
    const file = path.join(dir, f.path);
    if (path.relative(dir, file).startsWith('..'))
      throw new Error(`the manifest names a file outside the backup: ${f.path}`);
    if (!fs.existsSync(file)) throw new Error(`the backup lacks ${f.path}`);
    if (fs.statSync(file).size !== f.bytes || (await sha256Of(file)) !== f.sha256)
      throw new Error(`${f.path} does not match its checksum in the manifest: the backup is damaged`);
  }
  return manifest;
}

/** Copies a checked backup into `dataDir`, which must be empty or absent. */
export async function copyBackup(dir: string, manifest: Manifest, dataDir: string): Promise<void> {
  mustBeEmpty(dataDir, 'DATA_DIR');
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  for (const f of manifest.files) {
    const copied = await copyOwnerOnly(path.join(dir, f.path), path.join(dataDir, f.path), f.path);
    if (copied.sha256 !== f.sha256) throw new Error(`${f.path} changed while it was restored`);
  }
}

/** The read models rebuilt from the restored log, and the reactors set where the backup found them. */
export async function rebuildRestored(
  stores: { events: EventStore; docs: DocumentStore },
  manifest: Manifest,
  projections: readonly AnyProjection[],
): Promise<number> {
  const head = await stores.events.headPosition();
  if (head.commit.toString() !== manifest.log_position)
    throw new Error(`the restored log ends at ${head.commit}, the manifest says ${manifest.log_position}`);
  const count = await rebuildProjections(stores.events, stores.docs, projections);
  for (const [name, commit] of Object.entries(manifest.reactor_checkpoints)) {
    const position = { commit: BigInt(commit), prepare: BigInt(commit) };
    await stores.docs.commitAll([{ writes: [], checkpoint: reactorCheckpoint({ name }), position }]);
  }
  return count;
}
