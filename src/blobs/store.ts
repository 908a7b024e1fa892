/**
 * Files (artifacts, attachments, transcripts) by content: `DATA_DIR/blobs/<sha256>`. Events name
 * blobs by hash and never hold file bytes, so the log stays small and replays stay fast. With the
 * production adapters the blobs still live under DATA_DIR: mount it on shared storage.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { OWNER_ONLY_FILE, ownerOnlyDir } from '../owner-only.js';

export interface BlobStore {
  /** Stores the bytes and returns their id (hex SHA-256); storing the same bytes twice is free. */
  put(bytes: Buffer): Promise<string>;
  /** The file of a blob, or null when there is none (ids are validated, never paths). */
  path(id: string): string | null;
  read(id: string): Promise<Buffer | null>;
}

const BLOB_ID = /^[0-9a-f]{64}$/;

/** Asynchronous, so that a busy disk never stalls the event loop. */
const exists = (file: string) =>
  fs.promises.access(file).then(
    () => true,
    () => false,
  );

export function openBlobStore(dir: string): BlobStore {
  // Blobs made by earlier versions may be world-readable: the directory closes them off.
  ownerOnlyDir(dir, 'tighten');
  const fileOf = (id: string) => path.join(dir, id);
  const syncDir = async () => {
    const handle = await fs.promises.open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  };
  return {
    async put(bytes) {
      const id = createHash('sha256').update(bytes).digest('hex');
      const file = fileOf(id);
      if (!(await exists(file))) {
        // Write aside and rename, so a reader never sees half a file; both reach the disk before
        // an event can name the blob (the log is fsynced, so a crash must not lose what it names).
        const tmp = `${file}.${randomUUID()}.tmp`;
        const handle = await fs.promises.open(tmp, 'wx', OWNER_ONLY_FILE);
        try {
          await handle.chmod(OWNER_ONLY_FILE); // whatever the umask
          await handle.writeFile(bytes);
          await handle.datasync();
        } finally {
          await handle.close();
        }
        await fs.promises.rename(tmp, file);
        await syncDir();
      }
      return id;
    },
    path(id) {
      return BLOB_ID.test(id) && fs.existsSync(fileOf(id)) ? fileOf(id) : null;
    },
    async read(id) {
      if (!BLOB_ID.test(id)) return null;
      return fs.promises.readFile(fileOf(id)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw error;
      });
    },
  };
}
