/** The port's filter subset, sorts and keyset cursors as MongoDB queries. */
import type { Document } from 'mongodb';
import type { Condition, Filter, Scalar, Sort } from './port.js';
import { putOwn } from '../own-keys.js';

const PATH_SEGMENT = /^[A-Za-z0-9_]+$/;
const OPERATORS = new Set([
  '$eq',
  '$ne',
  '$in',
  '$nin',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$exists',
  '$contains',
  '$has',
  '$hasAny',
]);
/** Matches no document (MongoDB refuses an empty `$or`). */
const NOTHING: Document = { _id: { $in: [] } };

/** `id` is the document id; paths are validated so a filter cannot smuggle in `$where` & co. */
export function fieldName(path: string): string {
  if (path === 'id') return '_id';
  const segments = path.split('.');
  if (!segments.every((s) => PATH_SEGMENT.test(s)) || segments[0] === '_id' || segments[0] === '_pos') {
    throw new Error(`invalid field path: ${JSON.stringify(path)}`);
  }
  return path;
}

function assertScalar(v: unknown, op: string): void {
  if (v !== null && !['string', 'number', 'boolean'].includes(typeof v)) {
    throw new Error(`${op}: expected a string, number, boolean or null`);
  }
}

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function translateCondition(cond: Condition): unknown {
  if (cond === null || typeof cond !== 'object') {
    assertScalar(cond, '$eq');
    return cond;
  }
  if (Array.isArray(cond)) throw new Error('an array is not a condition');
  const out: Document = {};
  for (const [op, arg] of Object.entries(cond)) {
    if (arg === undefined) continue;
    if (!OPERATORS.has(op)) throw new Error(`unsupported operator: ${JSON.stringify(op)}`);
    if (op === '$contains') {
      if (typeof arg !== 'string') throw new Error('$contains: expected a string');
      out.$regex = escapeRegex(arg);
      out.$options = 'i';
    } else if (op === '$in' || op === '$nin') {
      if (!Array.isArray(arg)) throw new Error(`${op}: expected an array`);
      for (const v of arg) assertScalar(v, op);
      out[op] = arg;
    } else if (op === '$exists') {
      if (typeof arg !== 'boolean') throw new Error('$exists: expected a boolean');
      out[op] = arg;
    } else if (op === '$has' || op === '$hasAny') {
      if (out.$elemMatch) throw new Error('$has and $hasAny: one of them per field');
      if (op === '$has') assertScalar(arg, op);
      else if (!Array.isArray(arg)) throw new Error(`${op}: expected an array`);
      else for (const v of arg) assertScalar(v, op);
      out.$elemMatch = op === '$has' ? { $eq: arg } : { $in: arg };
    } else {
      assertScalar(arg, op);
      putOwn(out, op, arg);
    }
  }
  // `{}` would mean "equals an empty object" to MongoDB; a condition without operators is ignored.
  return Object.keys(out).length > 0 ? out : undefined;
}

export function translateFilter(filter: Filter | undefined): Document {
  if (filter !== undefined && (typeof filter !== 'object' || filter === null || Array.isArray(filter))) {
    throw new Error('a filter must be an object');
  }
  const out: Document = {};
  const and: Document[] = [];
  for (const [key, value] of Object.entries(filter ?? {})) {
    if (value === undefined) continue;
    if (key === '$or' || key === '$and') {
      if (!Array.isArray(value)) throw new Error(`${key}: expected an array of filters`);
      const subs = (value as Filter[]).map(translateFilter);
      if (key === '$and') and.push(...subs);
      else and.push(subs.length === 0 ? NOTHING : { $or: subs });
    } else {
      const cond = translateCondition(value as Condition);
      if (cond !== undefined) putOwn(out, fieldName(key), cond);
    }
  }
  return and.length > 0 ? { ...out, $and: and } : out;
}

/** Documents strictly after `after` in the order of `sort` (null and missing sort first). */
export function afterFilter(sort: Sort, after: readonly Scalar[]): Document {
  if (after.length !== sort.length) {
    throw new Error(`after has ${after.length} values for ${sort.length} sort keys`);
  }
  const branches: Document[] = [];
  const equalSoFar: Document[] = [];
  sort.forEach(([path, order], i) => {
    const f = fieldName(path);
    const v = after[i] ?? null;
    const beyond =
      order === 'asc'
        ? v === null
          ? { [f]: { $ne: null } }
          : { [f]: { $gt: v } }
        : v === null
          ? null
          : { $or: [{ [f]: { $lt: v } }, { [f]: null }] };
    if (beyond) branches.push(equalSoFar.length > 0 ? { $and: [...equalSoFar, beyond] } : beyond);
    equalSoFar.push({ [f]: { $eq: v } });
  });
  return branches.length > 0 ? { $or: branches } : NOTHING;
}
