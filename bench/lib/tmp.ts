/** Scratch directories for one workload process, on the same disk as the data would be, removed at exit. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made: string[] = [];
process.once('exit', () => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

export function tempDir(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `shopfloor-bench-${name}-`));
  made.push(dir);
  return dir;
}
