/** Everything Shopfloor keeps in DATA_DIR is its owner's only, whatever the umask it starts under. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app.js';
import { makeHook, postToken } from './webhook/ingress-helpers.js';

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

let parent: string;
let umask: number;
beforeAll(() => {
  parent = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-modes-'));
  umask = process.umask(0o022);
});
afterAll(() => {
  process.umask(umask);
  fs.rmSync(parent, { recursive: true, force: true });
});

/** Every file and directory under `dir` with its permission bits. */
function modes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const full = path.join(dir, entry);
    out[fs.statSync(full).isDirectory() ? `${entry}/` : entry] = modeOf(full).toString(8);
  }
  return out;
}

describe('file modes', () => {
  it('a fresh data directory under umask 022 holds owner-only files (0600) and directories (0700)', async () => {
    const dir = path.join(parent, 'fresh', 'data');
    const t = await startTestApp({ DATA_DIR: dir });
    try {
      // A webhook (its secret sealed: secrets.key) and a delivery (its payload: a blob).
      const hook = await makeHook(t);
      expect((await postToken(t, hook, '{"stored":"as a blob"}')).statusCode).toBe(202);
      const found = modes(dir);
      expect(Object.keys(found)).toEqual(
        expect.arrayContaining([
          'events.db',
          'events.db-wal',
          'events.db-shm',
          'read.db',
          'read.db-wal',
          'read.db-shm',
          'url-signing.key',
          'secrets.key',
          'blobs/',
        ]),
      );
      expect(Object.keys(found).filter((f) => f.startsWith('blobs/') && f !== 'blobs/').length).toBeGreaterThan(0);
      for (const [file, mode] of Object.entries(found))
        expect([file, mode]).toEqual([file, file.endsWith('/') ? '700' : '600']);
      expect(modeOf(dir).toString(8)).toBe('700');
    } finally {
      await t.close();
    }
  });

  it('tightens the files of an existing data directory made world-readable by an earlier version', async () => {
    // What an earlier version left under umask 022.
    const dir = path.join(parent, 'upgraded');
    fs.mkdirSync(path.join(dir, 'blobs'), { recursive: true, mode: 0o755 });
    for (const file of ['events.db', 'read.db', 'url-signing.key', 'blobs/old-blob'])
      fs.writeFileSync(path.join(dir, file), file.endsWith('.key') ? 'an-old-url-signing-key' : '', { mode: 0o644 });
    fs.chmodSync(path.join(dir, 'blobs'), 0o755);
    fs.chmodSync(dir, 0o755);
    const t = await startTestApp({ DATA_DIR: dir });
    try {
      for (const file of ['events.db', 'read.db', 'url-signing.key']) expect(modeOf(path.join(dir, file))).toBe(0o600);
      expect(modeOf(path.join(dir, 'blobs'))).toBe(0o700);
      // DATA_DIR itself was there before: its mode is the operator's.
      expect(modeOf(dir)).toBe(0o755);
    } finally {
      await t.close();
    }
  });
});
