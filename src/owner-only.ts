/**
 * Files and directories that only their owner may open: the event log and read models (payloads,
 * sealed secrets, people), the keys and the blobs. Modes are set explicitly, so no umask widens
 * (or narrows) them; files Shopfloor made with an earlier version are tightened when it opens them.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/** Sets `mode` on a file or directory of ours; a missing one, or another user's, is left alone. */
function tighten(target: string, mode: number): void {
  try {
    fs.chmodSync(target, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // EPERM: not ours (say, an operator reading the stores as another user): not ours to change.
    if (code !== 'ENOENT' && code !== 'EPERM') throw error;
  }
}

/**
 * Makes `dir` (and any missing parent) owner-only. An existing directory is tightened only when
 * `existing` says it is Shopfloor's own; DATA_DIR may be a mount point or a directory the operator
 * chose, whose mode is theirs.
 */
export function ownerOnlyDir(dir: string, existing: 'tighten' | 'keep' = 'keep'): void {
  const made = fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  if (made !== undefined || existing === 'tighten') tighten(dir, DIR_MODE);
}

/** An SQLite database file, made owner-only before SQLite opens it: its -wal and -shm files take its mode. */
export function ownerOnlySqliteFile(file: string): void {
  try {
    fs.closeSync(fs.openSync(file, 'wx', FILE_MODE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) tighten(f, FILE_MODE);
}

/**
 * Writes `contents` to `file` unless it exists (another instance may have made it first); owner-only
 * either way. The file appears whole or not at all: it is written aside and linked into place, so
 * processes starting together on one directory never read a file another is still writing.
 */
export function writeOwnerOnlyOnce(file: string, contents: string): void {
  if (!fs.existsSync(file)) {
    const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    fs.writeFileSync(aside, contents, { flag: 'wx', mode: FILE_MODE });
    try {
      fs.linkSync(aside, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      fs.unlinkSync(aside);
    }
  }
  tighten(file, FILE_MODE);
}

/** The mode of a blob's file, set on its handle before the bytes are written. */
export const OWNER_ONLY_FILE = FILE_MODE;
