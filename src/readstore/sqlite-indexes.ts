/**
 * The embedded store's indexes. They are found by their table and columns, never by name: SQLite
 * cannot rename an index, so a promoted shadow keeps the names it was built with (building them
 * again under the target's names cost as much as the rebuild's own index build). A name only has
 * to be free.
 */
import type { IndexSpec } from './port.js';
import type { DeclaredIndex } from './index-choice.js';
import { indexColumns, indexFields, indexName, quoteIdentifier as q } from './sqlite-filter.js';
import { type SqliteConnection, table } from './sqlite-connection.js';

/** Creates an index of `collection` over `fields` unless one over the same columns exists. */
export function createIndex({ db, stmt }: SqliteConnection, collection: string, fields: IndexSpec): void {
  if (fields.length === 0) throw new Error('an index needs at least one field');
  const columns = `(${indexColumns(fields)})`;
  const existing = stmt(`SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?`).all(collection) as {
    sql: string | null;
  }[];
  if (existing.some(({ sql }) => sql?.endsWith(columns))) return;
  const base = indexName(collection, fields);
  let name = base;
  for (let n = 2; stmt('SELECT 1 FROM sqlite_master WHERE name = ?').get(name); n++) name = `${base}#${n}`;
  db.exec(`CREATE INDEX ${q(name)} ON ${table(collection)} ${columns}`);
}

/** Each collection's indexes and their fields, read from the schema once. */
export interface IndexCatalog {
  of(collection: string): DeclaredIndex[];
  /** Forgets what was read of `collection` (of every collection when omitted): its schema changed. */
  forget(collection?: string): void;
}

export function indexCatalog({ read, stmt }: SqliteConnection): IndexCatalog {
  const known = new Map<string, DeclaredIndex[]>();
  return {
    of(collection) {
      let found = known.get(collection);
      if (!found) {
        const rows = read(() =>
          stmt(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`).all(
            collection,
          ),
        ) as { name: string; sql: string }[];
        found = rows.flatMap(({ name, sql }) => {
          const fields = indexFields(sql);
          return fields ? [{ name, fields }] : [];
        });
        known.set(collection, found);
      }
      return found;
    },
    forget(collection) {
      if (collection === undefined) known.clear();
      else known.delete(collection);
    },
  };
}
