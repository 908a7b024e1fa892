/** The example factory folders (test/fixtures/factory-files) as request files, and variants of them. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = fileURLToPath(new URL('../fixtures/factory-files', import.meta.url));

export type Files = Record<string, string>;

/** The files of a fixture folder, by path relative to it. */
export function fixture(name: string): Files {
  const dir = path.join(FIXTURES, name);
  const walk = (d: string): string[] =>
    fs
      .readdirSync(d, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  return Object.fromEntries(
    walk(dir).map((p) => [path.relative(dir, p).split(path.sep).join('/'), fs.readFileSync(p, 'utf8')]),
  );
}

/** Files with some replaced (a string), added, or removed (null). */
export const variant = (files: Files, changes: Record<string, string | null>): Files =>
  Object.fromEntries(Object.entries({ ...files, ...changes }).filter((e): e is [string, string] => e[1] !== null));

/** As a request body carries them. */
export const asList = (files: Files) => Object.entries(files).map(([p, content]) => ({ path: p, content }));

/** Replaces `from` by `to` in one file, failing when `from` is not there (a test that changes nothing asserts nothing). */
export function edit(files: Files, file: string, from: string | RegExp, to: string): Files {
  const content = files[file];
  if (content === undefined) throw new Error(`no file ${file}`);
  const next = content.replace(from, to);
  if (next === content) throw new Error(`${String(from)} is not in ${file}`);
  return { ...files, [file]: next };
}
