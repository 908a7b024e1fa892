/**
 * A backup's manifest (`manifest.json`, written last: a backup without one is incomplete) and the
 * file work both directions share: owner-only copies and SHA-256 checksums.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';

export const MANIFEST = 'manifest.json';
export const EVENTS_FILE = 'events.db';
const FORMAT = 'shopfloor-backup/1';

const fileEntry = z.object({
  path: z.string(),
  bytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
const manifestSchema = z.object({
  format: z.literal(FORMAT),
  shopfloor_version: z.string(),
  created_at: z.string(),
  /** The position of the newest event in the snapshot (SQLite: the events it holds). */
  log_position: z.string().regex(/^-?\d+$/),
  /** Where each reactor was: a restore resumes them there, so reactions not yet made are made. */
  reactor_checkpoints: z.record(z.string(), z.string().regex(/^-?\d+$/)),
  files: z.array(fileEntry),
});

export type Manifest = z.infer<typeof manifestSchema>;
export type FileEntry = z.infer<typeof fileEntry>;

export const newManifest = (fields: Omit<Manifest, 'format'>): Manifest => ({ format: FORMAT, ...fields });

export function readManifest(dir: string): Manifest {
  const file = path.join(dir, MANIFEST);
  if (!fs.existsSync(file)) throw new Error(`${dir} holds no ${MANIFEST}: not a backup, or one that did not finish`);
  const parsed = manifestSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file} is not a Shopfloor backup manifest: ${parsed.error.message}`);
  return parsed.data;
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}

/** Copies `from` to `to` (its directories made owner-only), owner-only; returns its manifest entry. */
export async function copyOwnerOnly(from: string, to: string, relative: string): Promise<FileEntry> {
  fs.mkdirSync(path.dirname(to), { recursive: true, mode: 0o700 });
  await fs.promises.copyFile(from, to, fs.constants.COPYFILE_EXCL);
  await fs.promises.chmod(to, 0o600);
  return { path: relative, bytes: (await fs.promises.stat(to)).size, sha256: await sha256Of(to) };
}

/** The files under `dir` (relative paths, sorted), but those `skip` refuses. */
export function filesUnder(dir: string, skip: (relative: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (relative: string) => {
    for (const entry of fs.readdirSync(path.join(dir, relative), { withFileTypes: true })) {
      const child = path.join(relative, entry.name);
      if (skip(child)) continue;
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) found.push(child);
    }
  };
  walk('');
  return found.sort();
}

/** Refuses a directory that exists and holds anything. */
export function mustBeEmpty(dir: string, what: string): void {
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0)
    throw new Error(`${what} ${dir} is not empty; name an empty or new directory`);
}
