/**
 * The committed console build (console/dist) is what its sources build to, and every page stays
 * light: the JavaScript and CSS one page needs, its lazy chunks included, at most 150 KB gzipped.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';
import { afterAll, describe, expect, it } from 'vitest';

const CONSOLE = fileURLToPath(new URL('../../console/', import.meta.url));
const DIST = path.join(CONSOLE, 'dist');
const PAGE_BUDGET = 150 * 1024;

interface Chunk {
  file: string;
  name?: string;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
  src?: string;
}
type Manifest = Record<string, Chunk>;

/** Every file under `dir`, relative to it. */
function filesOf(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** The files a chunk needs, lazy ones included: its imports, dynamic imports and their CSS, transitively. */
function closure(manifest: Manifest, key: string, seen = new Set<string>()): Set<string> {
  const chunk = manifest[key]!;
  if (seen.has(chunk.file)) return seen;
  seen.add(chunk.file);
  for (const css of chunk.css ?? []) seen.add(css);
  for (const next of [...(chunk.imports ?? []), ...(chunk.dynamicImports ?? [])]) closure(manifest, next, seen);
  return seen;
}

const gzipped = (file: string) => gzipSync(fs.readFileSync(path.join(DIST, file)), { level: 9 }).length;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-console-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the console build', () => {
  it('is current: building the sources again gives the committed console/dist (run `npm run console:build`)', async () => {
    // As `npm run console:build` builds: vitest's NODE_ENV=test would make a development build.
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      await build({
        configFile: path.join(CONSOLE, 'vite.config.ts'),
        mode: 'production',
        logLevel: 'silent',
        build: { outDir: tmp, emptyOutDir: true },
      });
    } finally {
      process.env.NODE_ENV = nodeEnv;
    }
    const committed = filesOf(DIST);
    expect(filesOf(tmp)).toEqual(committed);
    for (const file of committed)
      expect(fs.readFileSync(path.join(tmp, file)).equals(fs.readFileSync(path.join(DIST, file))), file).toBe(true);
  }, 120_000);

  it('keeps every page within 150 KB of gzipped JavaScript and CSS, lazy chunks included', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(DIST, '.vite/manifest.json'), 'utf8')) as Manifest;
    // The entry alone (without following its lazy pages) is the sign-in page and the shell.
    const shell = new Set([manifest['index.html']!.file, ...(manifest['index.html']!.css ?? [])]);
    for (const i of manifest['index.html']!.imports ?? []) closure(manifest, i, shell);
    const pages = (manifest['index.html']!.dynamicImports ?? []).map((key) => ({
      page: manifest[key]!.name ?? key,
      files: closure(manifest, key, new Set(shell)),
    }));
    expect(pages.length).toBeGreaterThanOrEqual(16);
    const weights = [{ page: 'sign-in and shell', files: shell }, ...pages].map(({ page, files }) => ({
      page,
      kib: [...files].reduce((sum, f) => sum + gzipped(f), 0) / 1024,
    }));
    console.log(weights.map((w) => `${w.page}: ${w.kib.toFixed(1)} KiB`).join('\n'));
    for (const w of weights) expect(w.kib * 1024, w.page).toBeLessThanOrEqual(PAGE_BUDGET);
  });
});
