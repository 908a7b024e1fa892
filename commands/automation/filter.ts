/**
 * Payload filters of webhook triggers: a JSON object mirroring the delivery body. Pure: a
 * validator for the write side (paths of every problem) and a matcher that says which path failed.
 * The rules (the spec leaves most open; the tests pin each): docs/features/automations.md "Payload filters".
 */
import type { FieldError } from '../../src/kernel/errors.js';
import { own, ownsKey } from '../../src/own-keys.js';

type JsonScalar = string | number | boolean | null;
type FilterCondition = JsonScalar | JsonScalar[] | OperatorObject | FieldMap;
interface OperatorObject {
  in?: JsonScalar[];
  not_in?: JsonScalar[];
  exists?: boolean;
}
export interface FieldMap {
  [field: string]: FilterCondition;
}

/** Limits that keep a saved filter cheap to evaluate on every delivery. */
export const FILTER_LIMITS = {
  maxDepth: 8,
  maxKeys: 100,
  maxListValues: 100,
  maxStringLength: 1024,
  maxBytes: 16 * 1024,
} as const;

const OPERATORS = ['in', 'not_in', 'exists'] as const;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): v is JsonScalar =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
const isOperatorObject = (v: Record<string, unknown>) => OPERATORS.some((op) => ownsKey(v, op));

/** Paths are dot-separated, list indexes too, like the schema validation errors of every route. */
const key = (path: string, field: string | number) => `${path}.${field}`;

/** Every problem of a filter, each with its path under `path` (empty when the filter is valid). */
export function validateFilter(filter: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const add = (at: string, message: string) => errors.push({ path: at, message });
  if (!isPlainObject(filter)) {
    add(path, 'a payload filter is a JSON object mirroring the body');
    return errors;
  }
  if (Buffer.byteLength(JSON.stringify(filter), 'utf8') > FILTER_LIMITS.maxBytes) {
    add(path, `a payload filter is at most ${FILTER_LIMITS.maxBytes} bytes of JSON`);
    return errors;
  }
  let keys = 0;

  const scalarList = (list: unknown, at: string) => {
    if (!Array.isArray(list)) return add(at, 'a list of allowed values');
    if (list.length === 0) return add(at, 'an empty list would match nothing');
    if (list.length > FILTER_LIMITS.maxListValues) add(at, `at most ${FILTER_LIMITS.maxListValues} values`);
    for (const [i, v] of list.entries()) scalar(v, key(at, i));
  };
  const scalar = (v: unknown, at: string) => {
    if (!isScalar(v)) return add(at, 'a value is a string, number, boolean or null');
    if (typeof v === 'string' && v.length > FILTER_LIMITS.maxStringLength)
      add(at, `at most ${FILTER_LIMITS.maxStringLength} characters`);
  };
  const operators = (ops: Record<string, unknown>, at: string) => {
    for (const op of Object.keys(ops)) {
      if (!(OPERATORS as readonly string[]).includes(op))
        add(key(at, op), 'an operator object holds only in, not_in and exists');
    }
    if ('in' in ops) scalarList(ops.in, `${at}.in`);
    if ('not_in' in ops) scalarList(ops.not_in, `${at}.not_in`);
    if ('exists' in ops && typeof ops.exists !== 'boolean') add(`${at}.exists`, 'exists is true or false');
    if (Array.isArray(ops.in) && Array.isArray(ops.not_in)) {
      const excluded = new Set(ops.not_in.map((v) => JSON.stringify(v)));
      if (ops.in.some((v) => excluded.has(JSON.stringify(v)))) add(at, 'a value is listed in both in and not_in');
    }
    if (ops.exists === false && 'in' in ops) add(at, 'exists: false with in would match nothing');
  };
  const fieldMap = (map: Record<string, unknown>, at: string, depth: number) => {
    if (depth > FILTER_LIMITS.maxDepth) return add(at, `filters nest at most ${FILTER_LIMITS.maxDepth} levels deep`);
    for (const [field, condition] of Object.entries(map)) {
      const here = key(at, field);
      if (++keys > FILTER_LIMITS.maxKeys)
        return add(path, `a payload filter has at most ${FILTER_LIMITS.maxKeys} keys`);
      if (Array.isArray(condition)) scalarList(condition, here);
      else if (isPlainObject(condition)) {
        if (isOperatorObject(condition)) operators(condition, here);
        else if (Object.keys(condition).length === 0)
          add(here, 'an empty object constrains nothing; use {"exists": true}');
        else fieldMap(condition, here, depth + 1);
      } else scalar(condition, here);
    }
  };
  fieldMap(filter, path, 1);
  return errors;
}

export interface FilterFailure {
  /** The filter path whose condition failed, such as `payload.pull_request.state`. */
  path: string;
  reason: string;
}

export type FilterVerdict = { matched: true } | { matched: false; failures: FilterFailure[] };

const MISSING = Symbol('missing');
type Value = unknown | typeof MISSING;

const shown = (v: unknown) => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

const fieldOf = (v: Value, field: string): Value => (isPlainObject(v) && ownsKey(v, field) ? own(v, field) : MISSING);

const allowed = (list: readonly JsonScalar[], v: Value): boolean => {
  if (v === MISSING) return false;
  // JSON equality of scalars is ===, since numbers arrive as doubles and there is no coercion.
  const one = (x: unknown) => list.some((a) => a === x);
  return Array.isArray(v) ? v.some(one) : one(v);
};

/** Why `condition` fails on `v`, or null when it holds. */
function leafFailure(condition: JsonScalar | JsonScalar[] | OperatorObject, v: Value): string | null {
  const ops: OperatorObject = Array.isArray(condition)
    ? { in: condition }
    : isPlainObject(condition)
      ? condition
      : { in: [condition] };
  if (ops.exists !== undefined && (v !== MISSING) !== ops.exists)
    return ops.exists ? 'the field is missing' : 'the field exists';
  if (ops.in && !allowed(ops.in, v)) {
    if (v === MISSING) return 'the field is missing';
    return `${shown(v)} is not ${Array.isArray(v) ? 'an array holding any' : 'one'} of ${shown(ops.in)}`;
  }
  if (ops.not_in && allowed(ops.not_in, v))
    return `${shown(v)} is ${Array.isArray(v) ? 'an array holding one' : 'one'} of the excluded ${shown(ops.not_in)}`;
  return null;
}

/** `element`: v is an element of an array, so an array here is not looked into again. */
function mapFailures(map: FieldMap, v: Value, path: string, element = false): FilterFailure[] {
  if (Array.isArray(v) && !element) {
    if (v.some((item) => mapFailures(map, item, path, true).length === 0)) return [];
    return [{ path, reason: v.length ? 'no element of the array matches every key' : 'the array is empty' }];
  }
  const failures: FilterFailure[] = [];
  for (const [field, condition] of Object.entries(map)) {
    const here = key(path, field);
    const value = fieldOf(v, field);
    if (isPlainObject(condition) && !isOperatorObject(condition))
      failures.push(...mapFailures(condition as FieldMap, value, here));
    else {
      const reason = leafFailure(condition as JsonScalar | JsonScalar[] | OperatorObject, value);
      if (reason) failures.push({ path: here, reason });
    }
  }
  return failures;
}

/**
 * Whether a delivery body matches a (valid) filter; when it does not, every failed path. A missing
 * or empty filter matches every body.
 */
export function matchFilter(filter: FieldMap | null | undefined, body: unknown, path = 'payload'): FilterVerdict {
  if (!filter) return { matched: true };
  const failures = mapFailures(filter, body, path);
  return failures.length ? { matched: false, failures } : { matched: true };
}
