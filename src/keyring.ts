/**
 * Keys that can be destroyed: one AES-256-GCM key per subject (a scorer, say), kept outside the
 * event log, so that text sealed under it in immutable events becomes unreadable for good once the
 * key is destroyed (crypto-shredding). Events, read models and their rebuilds only ever hold the
 * sealed form; whoever holds the key file can open it, until it is destroyed.
 *
 * The keys live in `DATA_DIR/keys/<subject>.key`, each sealed in turn under SECRETS_KEY (so a copy
 * of the directory alone opens nothing). A key is made on first use, once, by whichever process
 * gets there first (made aside and linked into place, so no reader sees half a file). Destroying
 * overwrites the file's bytes with zeros, fsyncs them, and leaves a tombstone: a destroyed subject
 * never gets a key again, so nothing sealed later can be read either. Every process serving the
 * same store must share DATA_DIR (as it must for blobs).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import { ownerOnlyDir, OWNER_ONLY_FILE } from './owner-only.js';
import { sealer, sealerFor } from './sealing.js';

const TOMBSTONE = 'destroyed\n';
const SUBJECT = /^[A-Za-z0-9_-]{1,128}$/;

export interface Keyring {
  /** `clear` sealed under the subject's key (made now if it has none); null once the key was destroyed. */
  seal(subject: string, clear: string): string | null;
  /** The clear text; null when the key was destroyed (or never made), or the sealed text is damaged. */
  open(subject: string, sealed: string): string | null;
  /** Destroys the subject's key for good: what was sealed under it can no longer be opened. */
  destroy(subject: string): void;
}

function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function openKeyring(dir: string, wrap: { seal(clear: string): string; open(sealed: string): string | null }) {
  ownerOnlyDir(dir);
  const fileOf = (subject: string) => {
    if (!SUBJECT.test(subject)) throw new Error(`not a key subject: ${subject}`);
    return path.join(dir, `${subject}.key`);
  };
  const read = (subject: string): string | null => {
    try {
      return fs.readFileSync(fileOf(subject), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  };
  const keyOf = (contents: string | null): Buffer | null => {
    if (contents === null || contents === TOMBSTONE) return null;
    const opened = wrap.open(contents.trim());
    return opened === null ? null : Buffer.from(opened, 'base64');
  };
  /** Makes the subject's key unless a key or a tombstone is there; returns what is there after. */
  const make = (subject: string): string | null => {
    const file = fileOf(subject);
    const aside = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
    fs.writeFileSync(aside, `${wrap.seal(randomBytes(32).toString('base64'))}\n`, {
      flag: 'wx',
      mode: OWNER_ONLY_FILE,
    });
    try {
      const fd = fs.openSync(aside, 'r');
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      fs.linkSync(aside, file); // fails when another process made it (or destroyed it) first
      fsyncDir(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      fs.rmSync(aside, { force: true });
    }
    return read(subject);
  };

  const keyring: Keyring = {
    seal(subject, clear) {
      let contents = read(subject);
      if (contents === null) contents = make(subject);
      const key = keyOf(contents);
      return key ? sealer(key).seal(clear) : null;
    },
    open(subject, sealed) {
      const key = keyOf(read(subject));
      return key ? sealer(key).open(sealed) : null;
    },
    destroy(subject) {
      const file = fileOf(subject);
      let fd: number;
      try {
        fd = fs.openSync(file, 'r+');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        // Never made: the tombstone alone keeps one from being made later.
        fs.writeFileSync(file, TOMBSTONE, { mode: OWNER_ONLY_FILE });
        fsyncDir(dir);
        return;
      }
      try {
        const size = fs.fstatSync(fd).size;
        // Over the key's own bytes first, so they are gone from the file's blocks, not just unlinked.
        fs.writeSync(fd, Buffer.alloc(Math.max(size, TOMBSTONE.length)), 0, Math.max(size, TOMBSTONE.length), 0);
        fs.fsyncSync(fd);
        fs.ftruncateSync(fd, 0);
        fs.writeSync(fd, TOMBSTONE, 0, 'utf8');
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    },
  };
  return keyring;
}

const byDataDir = new Map<string, Keyring>();

/** The keyring of this configuration: `DATA_DIR/keys`, each key sealed under SECRETS_KEY. */
export function keyringFor(config: Config): Keyring {
  const id = `${config.DATA_DIR}\0${config.SECRETS_KEY ?? ''}`;
  let k = byDataDir.get(id);
  if (!k) byDataDir.set(id, (k = openKeyring(path.join(config.DATA_DIR, 'keys'), sealerFor(config))));
  return k;
}
