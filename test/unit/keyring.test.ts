/** Destroyable keys: what is sealed under a subject's key opens until the key is destroyed, never after. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openKeyring } from '../../src/keyring.js';
import { sealer } from '../../src/sealing.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const newDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-keys-'));
  dirs.push(d);
  return path.join(d, 'keys');
};
const master = sealer(randomBytes(32));

describe('keyring', () => {
  it('seals and opens under a key of the subject made once, shared by every keyring on the directory', () => {
    const dir = newDir();
    const a = openKeyring(dir, master);
    const b = openKeyring(dir, master); // another process
    const sealed = a.seal('scorer-1', 'the judge said so')!;
    expect(sealed).not.toContain('the judge said so');
    expect(b.open('scorer-1', sealed)).toBe('the judge said so');
    expect(b.open('scorer-2', sealed)).toBeNull();
    // The key file itself is sealed under the master key.
    expect(openKeyring(dir, sealer(randomBytes(32))).open('scorer-1', sealed)).toBeNull();
    expect((fs.statSync(path.join(dir, 'scorer-1.key')).mode & 0o777).toString(8)).toBe('600');
  });

  it('destroys a key for good: nothing sealed under it opens, nothing is sealed under it again', () => {
    const dir = newDir();
    const k = openKeyring(dir, master);
    const sealed = k.seal('scorer-1', 'reason')!;
    const before = fs.readFileSync(path.join(dir, 'scorer-1.key'));
    k.destroy('scorer-1');
    expect(k.open('scorer-1', sealed)).toBeNull();
    expect(k.seal('scorer-1', 'later')).toBeNull();
    expect(openKeyring(dir, master).open('scorer-1', sealed)).toBeNull();
    const after = fs.readFileSync(path.join(dir, 'scorer-1.key'));
    expect(after.toString()).toBe('destroyed\n');
    expect(after.includes(before.subarray(0, 20))).toBe(false);
    // A subject destroyed before it ever had a key never gets one.
    k.destroy('scorer-2');
    expect(k.seal('scorer-2', 'x')).toBeNull();
    expect(() => k.seal('../escape', 'x')).toThrow(/not a key subject/);
  });
});
