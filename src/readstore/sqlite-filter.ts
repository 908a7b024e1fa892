/**
 * Compiles the port's filter subset, sorts and keyset cursors to SQL over `json_extract`.
 * Pure: values always travel as bound parameters. Field paths are validated and inlined, because
 * an expression index is only used when the query repeats its expression literally.
 */
import type { Condition, Filter, Scalar, Sort } from './port.js';

export type SqlValue = string | number | null;
export interface Sql {
  sql: string;
  params: SqlValue[];
}

const COLLECTION_NAME = /^[a-z][a-z0-9_]*$/;
const PATH_SEGMENT = /^[A-Za-z0-9_]+$/;
/** Tables the adapter owns, and SQLite's own prefix. */
const RESERVED = /^(checkpoints$|set_aside$|sqlite_)/;

export function assertCollectionName(name: string): void {
  if (!COLLECTION_NAME.test(name) || RESERVED.test(name)) {
    throw new Error(`invalid collection name: ${JSON.stringify(name)}`);
  }
}

export const quoteIdentifier = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** Named from collection and fields (`:` and `,` occur in neither); the store adds a suffix when the name is taken. */
export const indexName = (collection: string, fields: readonly string[]): string => `${collection}:${fields.join(',')}`;

/** `value` is the field's SQL value; `type` its JSON type name ('text', 'integer', 'true', ...). */
interface Field {
  value: string;
  type: string;
}

/** The field `id` is the document id (the key column); anything else is a path into the JSON. */
function field(path: string): Field {
  if (path === 'id') return { value: 'id', type: `'text'` };
  const segments = path.split('.');
  if (!segments.every((s) => PATH_SEGMENT.test(s))) {
    throw new Error(`invalid field path: ${JSON.stringify(path)}`);
  }
  const jsonPath = `'$.${segments.join('.')}'`;
  return { value: `json_extract(doc, ${jsonPath})`, type: `json_type(doc, ${jsonPath})` };
}

/**
 * Columns of an expression index over `fields`, in the same form `field()` produces. Every index
 * ends with the document id: pages sort by their keys then by id (keyset paging), so the index
 * yields a page in order without sorting ties.
 */
export const indexColumns = (fields: readonly string[]): string =>
  (fields.at(-1) === 'id' ? fields : [...fields, 'id']).map((f) => field(f).value).join(', ');

/** SQLite reads JSON true/false as 1/0. */
const bind = (v: Scalar): SqlValue => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

type Bracket = 'number' | 'string' | 'boolean';

/**
 * MongoDB only compares values of the same type (1 never equals true, '5' is never > 4); the
 * JSON type guard gives SQLite the same brackets.
 */
function typeGuard(f: Field, bracket: Bracket): string {
  switch (bracket) {
    case 'number':
      return `${f.type} IN ('integer', 'real')`;
    case 'string':
      return `${f.type} = 'text'`;
    case 'boolean':
      return `${f.type} IN ('true', 'false')`;
  }
}

function bracketOf(v: Scalar, op: string): Bracket | null {
  if (v === null) return null;
  const t = typeof v;
  if (t === 'number' || t === 'string' || t === 'boolean') return t as Bracket;
  throw new Error(`${op}: expected a string, number, boolean or null`);
}

const TRUE: Sql = { sql: '1', params: [] };
const FALSE: Sql = { sql: '0', params: [] };

function equals(f: Field, v: Scalar): Sql {
  const bracket = bracketOf(v, '$eq');
  // Like MongoDB, equality to null also matches a missing field.
  if (bracket === null) return { sql: `${f.value} IS NULL`, params: [] };
  return { sql: `(${f.value} = ? AND ${typeGuard(f, bracket)})`, params: [bind(v)] };
}

function oneOf(f: Field, values: unknown, op: string): Sql {
  if (!Array.isArray(values)) throw new Error(`${op}: expected an array`);
  const groups = new Map<Bracket, SqlValue[]>();
  const parts: Sql[] = [];
  for (const v of values as Scalar[]) {
    const bracket = bracketOf(v, op);
    if (bracket === null) {
      parts.push({ sql: `${f.value} IS NULL`, params: [] });
      continue;
    }
    const group = groups.get(bracket) ?? [];
    group.push(bind(v));
    groups.set(bracket, group);
  }
  for (const [bracket, group] of groups) {
    const marks = group.map(() => '?').join(', ');
    parts.push({ sql: `(${f.value} IN (${marks}) AND ${typeGuard(f, bracket)})`, params: group });
  }
  return parts.length === 0 ? FALSE : join(parts, 'OR');
}

/** A positive condition may be NULL (unknown) for a missing field; negation must make it false. */
const not = (s: Sql): Sql => ({ sql: `NOT coalesce(${s.sql}, 0)`, params: s.params });

function range(f: Field, op: '$gt' | '$gte' | '$lt' | '$lte', v: Scalar): Sql {
  const bracket = bracketOf(v, op);
  if (bracket === null) {
    // MongoDB: null is only equal to itself (and to a missing field), never greater or less.
    return op === '$gte' || op === '$lte' ? equals(f, null) : FALSE;
  }
  const sign = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op];
  return { sql: `(${f.value} ${sign} ? AND ${typeGuard(f, bracket)})`, params: [bind(v)] };
}

function operator(f: Field, op: string, arg: unknown): Sql {
  switch (op) {
    case '$eq':
      return equals(f, arg as Scalar);
    case '$ne':
      return not(equals(f, arg as Scalar));
    case '$in':
      return oneOf(f, arg, op);
    case '$nin':
      return not(oneOf(f, arg, op));
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return range(f, op, arg as Scalar);
    case '$exists':
      if (typeof arg !== 'boolean') throw new Error('$exists: expected a boolean');
      // Present even if null, as in MongoDB: json_type is 'null' for a JSON null.
      return { sql: `${f.type} IS ${arg ? 'NOT ' : ''}NULL`, params: [] };
    case '$contains':
      if (typeof arg !== 'string') throw new Error('$contains: expected a string');
      return contains(f, arg);
    case '$has':
      return has(f, arg as Scalar);
    case '$hasAny':
      return hasAny(f, arg);
    default:
      throw new Error(`unsupported operator: ${JSON.stringify(op)}`);
  }
}

/**
 * Case-insensitive substring. An ASCII needle only needs ASCII folding, which SQLite's own
 * lower() does without calling into JavaScript for every row; any other needle folds through
 * shopfloor_lower.
 */
function contains(f: Field, needle: string): Sql {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the test is whether every character is ASCII
  if (/^[\x00-\x7f]*$/.test(needle)) {
    return { sql: `(${f.type} = 'text' AND instr(lower(${f.value}), ?) > 0)`, params: [needle.toLowerCase()] };
  }
  return { sql: `(${f.type} = 'text' AND instr(${LOWER}(${f.value}), ${LOWER}(?)) > 0)`, params: [needle] };
}

/** An element of the array at `f` equals `v` (same type bracket, as MongoDB's $elemMatch). */
const has = (f: Field, v: Scalar): Sql => someElement(f, equals(ELEMENT, v), '$has');

/** An element of the array at `f` is one of `values`: one pass over the array for all of them. */
const hasAny = (f: Field, values: unknown): Sql => someElement(f, oneOf(ELEMENT, values, '$hasAny'), '$hasAny');

const ELEMENT: Field = { value: 'j.value', type: 'j.type' };

function someElement(f: Field, match: Sql, op: string): Sql {
  if (f.value === 'id') throw new Error(`${op}: the document id is not an array`);
  const path = f.value.slice('json_extract(doc, '.length, -1);
  return {
    sql: `(${f.type} = 'array' AND EXISTS (SELECT 1 FROM json_each(doc, ${path}) AS j WHERE ${match.sql}))`,
    params: match.params,
  };
}

/**
 * SQLite's lower() folds ASCII only; the adapter registers this function (JS toLowerCase) so that
 * `$contains` ignores case for every alphabet, as MongoDB's case-insensitive regex does.
 */
export const LOWER = 'shopfloor_lower';

function condition(path: string, cond: Condition): Sql {
  const f = field(path);
  if (cond === null || typeof cond !== 'object') return equals(f, cond);
  if (Array.isArray(cond)) throw new Error(`${path}: an array is not a condition`);
  const parts = Object.entries(cond)
    .filter(([, arg]) => arg !== undefined)
    .map(([op, arg]) => operator(f, op, arg));
  return join(parts, 'AND');
}

function join(parts: Sql[], glue: 'AND' | 'OR'): Sql {
  if (parts.length === 0) return glue === 'AND' ? TRUE : FALSE;
  if (parts.length === 1) return parts[0]!;
  return {
    sql: `(${parts.map((p) => p.sql).join(` ${glue} `)})`,
    params: parts.flatMap((p) => p.params),
  };
}

export function compileFilter(filter: Filter | undefined): Sql {
  if (filter !== undefined && (typeof filter !== 'object' || filter === null || Array.isArray(filter))) {
    throw new Error('a filter must be an object');
  }
  const parts: Sql[] = [];
  for (const [key, value] of Object.entries(filter ?? {})) {
    if (value === undefined) continue;
    if (key === '$or' || key === '$and') {
      if (!Array.isArray(value)) throw new Error(`${key}: expected an array of filters`);
      parts.push(join((value as Filter[]).map(compileFilter), key === '$or' ? 'OR' : 'AND'));
    } else {
      parts.push(condition(key, value as Condition));
    }
  }
  return join(parts, 'AND');
}

/** SQLite sorts NULL (and so a missing field) first ascending, last descending, like MongoDB. */
export const compileOrderBy = (sort: Sort): string =>
  sort.map(([path, order]) => `${field(path).value} ${order === 'desc' ? 'DESC' : 'ASC'}`).join(', ');

/**
 * Rows strictly after `after` in the order of `sort`: the first key that differs decides.
 * Compares with SQLite's own cross-type order, the one ORDER BY uses, so no type guard here.
 */
export function compileAfter(sort: Sort, after: readonly Scalar[]): Sql {
  if (after.length !== sort.length) {
    throw new Error(`after has ${after.length} values for ${sort.length} sort keys`);
  }
  const branches: Sql[] = [];
  const equalSoFar: Sql[] = [];
  sort.forEach(([path, order], i) => {
    const f = field(path);
    const v = after[i] ?? null;
    branches.push(join([...equalSoFar, beyond(f, order, v)], 'AND'));
    equalSoFar.push(
      v === null ? { sql: `${f.value} IS NULL`, params: [] } : { sql: `${f.value} = ?`, params: [bind(v)] },
    );
  });
  return join(branches, 'OR');
}

/**
 * The rows of compileAfter's condition as a range over the first sort key, which an index can
 * seek to (an OR of per-key branches makes SQLite walk the index from its start). Descending,
 * the rows whose first key is NULL also follow the cursor but lie outside the range:
 * `nullsFollow` selects them, to be read once the range runs out. Null when the cursor's first
 * value is NULL.
 */
export function compileLeadingRange(sort: Sort, after: readonly Scalar[]): (Sql & { nullsFollow: Sql | null }) | null {
  const [path, order] = sort[0]!;
  const v = after[0] ?? null;
  if (v === null) return null;
  const f = field(path);
  if (order === 'asc') return { sql: `${f.value} >= ?`, params: [bind(v)], nullsFollow: null };
  return { sql: `${f.value} <= ?`, params: [bind(v)], nullsFollow: { sql: `${f.value} IS NULL`, params: [] } };
}

/** Values that sort strictly after `v` for one key. */
function beyond(f: Field, order: 'asc' | 'desc', v: Scalar): Sql {
  if (order === 'asc') {
    return v === null ? { sql: `${f.value} IS NOT NULL`, params: [] } : { sql: `${f.value} > ?`, params: [bind(v)] };
  }
  if (v === null) return FALSE;
  return { sql: `(${f.value} < ? OR ${f.value} IS NULL)`, params: [bind(v)] };
}

/**
 * The rows strictly after `after` in the order of `sort`, as steps read one after the other, each
 * an equality on the first keys and a range on the next: for sort (a, b, id) and cursor (x, y, z),
 * first a = x AND b = y AND id beyond z, then a = x AND b beyond y, then a beyond x. Each step is
 * one seek into an index over the sort's keys, read in its order; where a key's NULLs follow the
 * cursor's value (descending), they are a step of their own, after the range. An OR of the steps
 * in one statement (compileAfter) makes SQLite read each range and sort them all, however many.
 */
export function compileAfterSteps(sort: Sort, after: readonly Scalar[]): Array<Sql & { orderBy: string }> {
  if (after.length !== sort.length) throw new Error(`after has ${after.length} values for ${sort.length} sort keys`);
  const steps: Array<Sql & { orderBy: string }> = [];
  for (let k = sort.length - 1; k >= 0; k--) {
    const prefix = sort.slice(0, k).map(([path], i): Sql => {
      const v = after[i] ?? null;
      const f = field(path);
      return v === null ? { sql: `${f.value} IS NULL`, params: [] } : { sql: `${f.value} = ?`, params: [bind(v)] };
    });
    const [path, order] = sort[k]!;
    const f = field(path);
    const v = after[k] ?? null;
    // Keys pinned by the step's equalities are left out of its ORDER BY: SQLite does not see that
    // an indexed expression held equal is in order, and would sort the rows it reads.
    const step = (last: Sql, from: number) => ({
      ...join([...prefix, last], 'AND'),
      orderBy: compileOrderBy(sort.slice(from)),
    });
    if (order === 'asc') {
      steps.push(
        step(
          v === null ? { sql: `${f.value} IS NOT NULL`, params: [] } : { sql: `${f.value} > ?`, params: [bind(v)] },
          k,
        ),
      );
    } else if (v !== null) {
      steps.push(step({ sql: `${f.value} < ?`, params: [bind(v)] }, k));
      if (k < sort.length - 1) steps.push(step({ sql: `${f.value} IS NULL`, params: [] }, k + 1));
    }
  }
  return steps;
}

/** The fields of an index, as `indexColumns` wrote them (the trailing `id` included), from its CREATE statement. */
export function indexFields(createSql: string): string[] | null {
  const open = createSql.indexOf('(');
  if (open < 0 || !createSql.endsWith(')')) return null;
  const columns = createSql.slice(open + 1, -1).split(/,\s*(?=json_extract|id$)/);
  const fields: string[] = [];
  for (const column of columns) {
    if (column.trim() === 'id') fields.push('id');
    else {
      const m = /^json_extract\(doc, '\$\.([A-Za-z0-9_.]+)'\)$/.exec(column.trim());
      if (!m) return null;
      fields.push(m[1]!);
    }
  }
  return fields;
}
