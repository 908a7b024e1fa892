/** `shopfloor backup <dir>` and `shopfloor restore <dir>` (src/backup/, docs/operations.md "Backup and restore"). */
import type { Config } from '../config.js';
import { backup } from '../backup/backup.js';
import { checkBackup, copyBackup, rebuildRestored } from '../backup/restore.js';
import { mustBeEmpty } from '../backup/manifest.js';
import type { AnyProjection } from '../projector/projection.js';
import { withStores } from '../runtime.js';

export const BACKUP_USAGE = `  shopfloor backup <dir>                    a consistent snapshot of the embedded store (log, blobs, keys) while the server runs
  shopfloor restore <dir>                   check a backup and restore it into an empty DATA_DIR; the read models are rebuilt`;

const PRODUCTION_TOOLS = `the production stores are backed up with their own tools (docs/operations.md, "Backup and restore"):
  EventStoreDB: its online file-copy backup of the database directory (or a snapshot of its volume)
  MongoDB: nothing to back up but what rebuilds (read models); mongodump if you want it
  DATA_DIR (blobs, keys, secrets.key, url-signing.key): copy it with the event store's backup`;

/** The embedded store only: a server on EventStoreDB or MongoDB has its own tools. */
function refuseProduction(config: Config, action: string): void {
  if (config.EVENTSTORE_URL || config.MONGODB_URL)
    throw new Error(
      `shopfloor ${action} works on the embedded store only (EVENTSTORE_URL or MONGODB_URL is set);\n${PRODUCTION_TOOLS}`,
    );
}

export async function backupCommand(
  config: Config,
  dir: string | undefined,
  reactors: readonly string[],
): Promise<number> {
  refuseProduction(config, 'backup');
  if (!dir) throw new Error('name the directory to back up into: shopfloor backup <dir>');
  return withStores(config, async (stores) => {
    const { logPosition, files } = await backup(config.DATA_DIR, dir, stores.docs, reactors);
    console.log(`backed up ${files.length} file(s) to ${dir}: the log up to position ${logPosition}`);
    return 0;
  });
}

export async function restoreCommand(config: Config, dir: string | undefined, projections: readonly AnyProjection[]) {
  refuseProduction(config, 'restore');
  if (!dir) throw new Error('name the backup to restore: shopfloor restore <dir>');
  mustBeEmpty(config.DATA_DIR, 'DATA_DIR');
  const manifest = await checkBackup(dir);
  await copyBackup(dir, manifest, config.DATA_DIR);
  return withStores(config, async (stores) => {
    const events = await rebuildRestored(stores, manifest, projections);
    console.log(
      `restored ${manifest.files.length} file(s) into ${config.DATA_DIR}: the log up to position ${manifest.log_position}, ${events} event(s) projected`,
    );
    return 0;
  });
}
