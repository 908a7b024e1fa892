/**
 * A find on the embedded store: a page read in order through the index that gives the sort's
 * order, and the bounded walk of a filter that index does not wholly serve (port.ts, `maxScan`).
 */
import type { Doc, FindQuery, Page } from './port.js';
import { type DeclaredIndex, orderingIndex, splitByIndex } from './index-choice.js';
import { compileAfterSteps, compileFilter, compileOrderBy, quoteIdentifier as q, type Sql } from './sqlite-filter.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { sortKeyValue } from './sort-key.js';

export interface DocRow {
  id: string;
  doc: string;
}
/** A row a bounded walk read: its document, and whether it matches the conditions the index does not serve. */
interface WalkedRow extends DocRow {
  hit: number;
}

/** A bounded walk (`FindQuery.maxScan`) reads this many rows at a time. */
const WALK_CHUNK = 200;

/** What a find reads: a collection's table (quoted), its indexes as now declared, its rows as documents. */
export interface FindSource<T extends Doc> {
  conn: SqliteConnection;
  from: string;
  indexes(): readonly DeclaredIndex[];
  parse(row: DocRow): T;
}

/**
 * The statements a find runs, in order, until the page is full: the first page is one; a next
 * page reads the steps after its cursor (compileAfterSteps). Each is read through the index
 * that gives the sort's order after the filter's pinned fields, when the collection has one
 * (`INDEXED BY`): SQLite's planner, without statistics, would rather filter through another
 * index and sort every match, which costs what the collection holds, not what the page does.
 */
function findStatements(from: string, query: FindQuery, index: DeclaredIndex | null, residual?: Sql): Sql[] {
  if (!Number.isInteger(query.limit) || query.limit < 1) throw new Error('limit must be a positive integer');
  if (query.sort.length === 0) throw new Error('find needs a sort');
  const where = compileFilter(query.filter);
  const source = index ? `${from} INDEXED BY ${q(index.name)}` : from;
  // A bounded walk also says, of each row, whether it matches what the index does not serve.
  const hit = residual ? `, (${residual.sql}) AS hit` : '';
  const select = (conditions: Sql[], order: string): Sql => {
    const all = [where, ...conditions];
    return {
      sql: `SELECT id, json(doc) AS doc${hit} FROM ${source} WHERE ${all.map((c) => `(${c.sql})`).join(' AND ')} ORDER BY ${order}`,
      params: [...(residual?.params ?? []), ...all.flatMap((c) => c.params)],
    };
  };
  if (!query.after) return [select([], compileOrderBy(query.sort))];
  return compileAfterSteps(query.sort, query.after).map((step) => select([step], step.orderBy));
}

/** Reads up to `count` rows, through the statements in turn. */
function readRows<R extends DocRow>({ read, stmt }: SqliteConnection, steps: Sql[], count: number): R[] {
  let rows: R[] = [];
  for (const step of steps) {
    // The limit is written into the SQL: SQLite plans with a bound LIMIT's value, so binding
    // one, even the same again, makes it compile the statement anew on every run (+6 µs).
    const found = read(() => stmt(`${step.sql} LIMIT ${count - rows.length}`).all(...step.params)) as R[];
    rows = rows.length ? rows.concat(found) : found;
    if (rows.length >= count) break;
  }
  return rows;
}

const keysOf = <T extends Doc>(source: FindSource<T>, sort: FindQuery['sort'], row: DocRow, doc = source.parse(row)) =>
  sort.map(([path]) => sortKeyValue(row.id, doc, path));

/** One page of a find, read through the statements above. */
export function findPage<T extends Doc>(source: FindSource<T>, query: FindQuery): Page<T> {
  const index = orderingIndex(source.indexes(), query.filter, query.sort);
  if (index && query.maxScan !== undefined) {
    const { seek, residual } = splitByIndex(query.filter, index, query.sort);
    if (residual) return walkPage(source, { ...query, filter: seek }, index, compileFilter(residual), query.maxScan);
  }
  const rows = readRows(source.conn, findStatements(source.from, query, index), query.limit + 1);
  const page = rows.slice(0, query.limit);
  const items = page.map(source.parse);
  const lastRow = page.at(-1);
  const last = items.at(-1);
  const next = rows.length > query.limit && lastRow && last ? keysOf(source, query.sort, lastRow, last) : null;
  return { items, next };
}

/**
 * A page of the rows the seek finds that match `residual` too, walking at most `maxScan` of
 * them, a chunk at a time so that a page that fills early stops early (port.ts, `maxScan`).
 */
function walkPage<T extends Doc>(
  source: FindSource<T>,
  query: FindQuery,
  index: DeclaredIndex,
  residual: Sql,
  maxScan: number,
): Page<T> {
  const items: T[] = [];
  let after = query.after;
  let walked = 0;
  let lastHit: DocRow | null = null;
  for (;;) {
    const chunk = Math.min(WALK_CHUNK, maxScan - walked);
    const steps = findStatements(source.from, { ...query, after }, index, residual);
    const rows = readRows<WalkedRow>(source.conn, steps, chunk);
    for (const row of rows) {
      walked++;
      if (!row.hit) continue;
      if (items.length === query.limit) return { items, next: keysOf(source, query.sort, lastHit!, items.at(-1)) };
      items.push(source.parse(row));
      lastHit = row;
    }
    if (rows.length < chunk) return { items, next: null };
    const reached = keysOf(source, query.sort, rows.at(-1)!);
    if (walked >= maxScan) return { items, next: reached };
    after = reached;
  }
}

/** The plan SQLite would follow for each statement of a find (`EXPLAIN QUERY PLAN`). */
export function explainFind<T extends Doc>({ conn, from, indexes }: FindSource<T>, query: FindQuery): string[] {
  const index = orderingIndex(indexes(), query.filter, query.sort);
  return findStatements(from, query, index).flatMap((s) =>
    (
      conn.read(() => conn.stmt(`EXPLAIN QUERY PLAN ${s.sql} LIMIT ${query.limit + 1}`).all(...s.params)) as {
        detail: string;
      }[]
    ).map((row) => row.detail),
  );
}
