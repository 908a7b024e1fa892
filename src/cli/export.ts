/**
 * `shopfloor export <read model> [--format jsonl|csv] [--out file]`: every document of a read
 * model, for analysts. JSON lines write each document as stored, with its `id`; CSV flattens
 * nested objects into dotted columns (`cost.total`), writes arrays as JSON text, and takes its
 * header from every document's fields (a first pass collects them), so no column is lost.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { Collection, Doc, DocumentStore } from '../readstore/port.js';
import { type AnyProjection, collectionOf } from '../projector/projection.js';
import { own, putOwn } from '../own-keys.js';

export const EXPORT_USAGE =
  '  shopfloor export <read model> [--format jsonl|csv] [--out file]  every document of a read model, for analysts';

type Cell = string | number | boolean | null;

/** A document's fields as dotted paths to scalars; arrays stay whole (as JSON text in CSV). */
function flatten(doc: Doc, prefix = '', into: Record<string, Cell | unknown[]> = {}): Record<string, Cell | unknown[]> {
  for (const [key, value] of Object.entries(doc)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) flatten(value as Doc, path, into);
    else putOwn(into, path, value as Cell | unknown[]);
  }
  return into;
}

/** RFC 4180, and text a spreadsheet would run as a formula kept as text (a leading apostrophe). */
function csvCell(value: Cell | unknown[] | undefined): string {
  if (value === null || value === undefined) return '';
  let text = Array.isArray(value) ? JSON.stringify(value) : String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

async function writeAll(out: NodeJS.WritableStream, chunk: string): Promise<void> {
  if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
}

async function exportCollection(collection: Collection, format: 'jsonl' | 'csv', out: NodeJS.WritableStream) {
  let count = 0;
  if (format === 'jsonl') {
    for await (const [id, doc] of collection.scan()) {
      await writeAll(out, `${JSON.stringify({ id, ...doc })}\n`);
      count += 1;
    }
    return count;
  }
  const columns = new Set<string>(['id']);
  for await (const [, doc] of collection.scan()) for (const c of Object.keys(flatten(doc))) columns.add(c);
  const header = [...columns];
  await writeAll(out, `${header.map(csvCell).join(',')}\r\n`);
  for await (const [id, doc] of collection.scan()) {
    const flat: Record<string, Cell | unknown[]> = { id, ...flatten(doc) };
    await writeAll(out, `${header.map((c) => csvCell(own(flat, c))).join(',')}\r\n`);
    count += 1;
  }
  return count;
}

export async function exportReadModel(
  docs: DocumentStore,
  projections: readonly AnyProjection[],
  argv: string[],
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { format: { type: 'string', default: 'jsonl' }, out: { type: 'string' } },
  });
  const [name] = positionals;
  const projection = projections.find((p) => p.name === name);
  if (!projection) {
    console.error(
      `name a read model to export; known: ${projections.map((p) => p.name).join(', ')}\nusage:\n${EXPORT_USAGE}`,
    );
    return 2;
  }
  if (values.format !== 'jsonl' && values.format !== 'csv') {
    console.error(`--format is jsonl or csv, not ${values.format}`);
    return 2;
  }
  const out = values.out ? fs.createWriteStream(values.out, { mode: 0o600 }) : process.stdout;
  const count = await exportCollection(docs.collection(collectionOf(projection)), values.format, out);
  if (values.out) {
    await new Promise<void>((resolve, reject) =>
      (out as fs.WriteStream).end((e?: Error | null) => (e ? reject(e) : resolve())),
    );
    console.error(`${projection.name}: ${count} document(s) written to ${values.out}`);
  }
  return 0;
}
