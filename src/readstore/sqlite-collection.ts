/** A collection of the embedded document store: one table of documents, read by id, found, counted and scanned. */
import type { Collection, Doc, FindQuery, Page } from './port.js';
import { compileFilter } from './sqlite-filter.js';
import { type SqliteConnection, table } from './sqlite-connection.js';
import { type DocRow, explainFind, type FindSource, findPage } from './sqlite-find.js';
import type { IndexCatalog } from './sqlite-indexes.js';

/** Scans read in pages so that no read stays open across an await (it would block every write). */
const SCAN_PAGE = 500;

export function sqliteCollection<T extends Doc>(
  conn: SqliteConnection,
  indexes: IndexCatalog,
  name: string,
): Collection<T> {
  const { read, stmt } = conn;
  const from = table(name);
  const parse = (row: DocRow): T => JSON.parse(row.doc) as T;
  const source: FindSource<T> = { conn, from, indexes: () => indexes.of(name), parse };
  return {
    async get(id) {
      const row = read(() => stmt(`SELECT id, json(doc) AS doc FROM ${from} WHERE id = ?`).get(id)) as
        | DocRow
        | undefined;
      return row ? parse(row) : null;
    },
    async getMany(ids) {
      if (ids.length === 0) return new Map();
      // One JSON parameter instead of one per id: no limit on the number of ids.
      const rows = read(() =>
        stmt(`SELECT id, json(doc) AS doc FROM ${from} WHERE id IN (SELECT value FROM json_each(?))`).all(
          JSON.stringify(ids),
        ),
      ) as DocRow[];
      return new Map(rows.map((row) => [row.id, parse(row)]));
    },
    async find(query: FindQuery): Promise<Page<T>> {
      try {
        return findPage(source, query);
      } catch (error) {
        // Another process (`projections retry` or `rebuild`) promoted a rebuilt collection, whose
        // indexes have other names: read them again.
        if (!/no such index/.test((error as Error).message)) throw error;
        indexes.forget(name);
        return findPage(source, query);
      }
    },
    async explain(query: FindQuery): Promise<string[]> {
      return explainFind(source, query);
    },
    async count(filter) {
      const where = compileFilter(filter);
      const row = read(() => stmt(`SELECT count(*) AS n FROM ${from} WHERE ${where.sql}`).get(...where.params)) as {
        n: number;
      };
      return row.n;
    },
    async *scan() {
      const first = stmt(`SELECT id, json(doc) AS doc FROM ${from} ORDER BY id LIMIT ${SCAN_PAGE}`);
      const following = stmt(`SELECT id, json(doc) AS doc FROM ${from} WHERE id > ? ORDER BY id LIMIT ${SCAN_PAGE}`);
      let after: string | null = null;
      for (;;) {
        const rows = read(() => (after === null ? first.all() : following.all(after))) as DocRow[];
        for (const row of rows) yield [row.id, parse(row)] as [string, T];
        const last = rows.at(-1);
        if (rows.length < SCAN_PAGE || !last) return;
        after = last.id;
      }
    },
  };
}
