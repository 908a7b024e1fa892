/** Query and body pieces shared by many routes. */
import { z } from 'zod';
import { own } from '../own-keys.js';

export const limitParam = (max = 100, fallback = 50) => z.coerce.number().int().min(1).max(max).default(fallback);

/** Query booleans are the words true and false, nothing else. */
export const booleanParam = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .default(false);

/** Repeatable query parameters arrive as a string or an array of strings; at most 50 of them. */
export const repeatable = <T extends z.ZodType>(item: T) =>
  z.preprocess((v) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]), z.array(item).max(50).optional());

export const dateTimeParam = z.iso.datetime({ offset: true }).max(64);

export const sortOrderParam = z.enum(['asc', 'desc']).default('desc');

export const uidParam = z.string().min(1).max(128);

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** `page_info` of every paged list. */
export const pageInfoSchema = z.object({ has_next_page: z.boolean(), next_cursor: z.string().nullable() });

/** An answer with no body: 204, and redirects (302, with a `location`). */
export const noContent = (description = 'No content') => z.null().describe(description);

/** How deep any free-form JSON field may nest (`{}` and `[]` are one level each). */
export const MAX_JSON_DEPTH = 64;

export interface JsonBounds {
  /** The most bytes of UTF-8 the value may take as `JSON.stringify` writes it. */
  maxBytes: number;
  /** The most levels of objects and arrays; MAX_JSON_DEPTH unless given. */
  maxDepth?: number;
  /** Top-level fields left out of the size, as they have bounds of their own (a config's `base_prompt`). */
  besides?: readonly string[];
}

const KB = 1024;
/** `1 KB`, `64 KB`, `1 MiB`: how a bound reads in a message. */
const byteSize = (n: number) =>
  n >= KB * KB && n % (KB * KB) === 0 ? `${n / (KB * KB)} MiB` : n % KB === 0 ? `${n / KB} KB` : `${n} bytes`;

/** A value still to be measured, with where it sits (kept to name a number that is not finite). */
interface Pending {
  value: unknown;
  depth: number;
  key?: string | number;
  parent?: Pending;
}

const pathOf = (item: Pending): string => {
  const keys: Array<string | number> = [];
  for (let at: Pending | undefined = item; at?.parent; at = at.parent) keys.unshift(at.key!);
  return keys.join('.');
};

/**
 * JSON.parse reads `1e999`, `-1e999` and a 400-digit integer as ±Infinity, which JSON.stringify
 * writes as null: the value would be stored as something the sender never sent.
 */
const notFinite = (item: Pending) => {
  const at = pathOf(item);
  return `holds a number too large to keep${at ? ` at ${at}` : ''}: numbers are finite, at most ±1.8e308`;
};

/**
 * Why `value` breaks `bounds`, or null. One pass over the value without recursion (so no depth
 * overflows the stack) and without serializing it whole: each string is measured alone, and only
 * once it could fit, so a 20 MB string or a 100,000-element array is refused before it is looked at.
 * A number that is not finite breaks every bound.
 */
export function jsonBoundsProblem(value: unknown, bounds: JsonBounds): string | null {
  const { maxBytes, maxDepth = MAX_JSON_DEPTH, besides = [] } = bounds;
  const tooLarge = `at most ${byteSize(maxBytes)} of JSON`;
  let bytes = 0;
  const add = (n: number) => {
    bytes += n;
    return bytes > maxBytes;
  };
  // Each code unit is at least one byte of JSON, so a string longer than the room left never fits.
  const addString = (s: string) => (s.length + 2 > maxBytes - bytes ? true : add(Buffer.byteLength(JSON.stringify(s))));
  const pending: Pending[] = [{ value, depth: 0 }];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const v = item.value;
    if (typeof v === 'string') {
      if (addString(v)) return tooLarge;
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) return notFinite(item);
      if (add(String(v).length)) return tooLarge;
    } else if (typeof v === 'boolean') {
      if (add(v ? 4 : 5)) return tooLarge;
    } else if (v === null || typeof v !== 'object') {
      // null, and what JSON cannot hold (it never comes out of a JSON body): as null, or nothing at the top.
      if (add(v === undefined && item.depth === 0 ? 0 : 4)) return tooLarge;
    } else {
      const depth = item.depth + 1;
      if (depth > maxDepth) return `nests at most ${maxDepth} levels deep`;
      if (Array.isArray(v)) {
        // Brackets and commas first: a huge array is refused before its elements are pushed.
        if (add(2 + Math.max(0, v.length - 1))) return tooLarge;
        for (let i = v.length - 1; i >= 0; i--) pending.push({ value: v[i], depth, key: i, parent: item });
      } else {
        const keys = Object.keys(v).filter((k) => !(item.depth === 0 && besides.includes(k)));
        if (add(2 + Math.max(0, keys.length - 1) + keys.length)) return tooLarge; // braces, commas, colons
        for (const key of keys) {
          if (addString(key)) return tooLarge;
          // BSON writes keys as C strings: MongoDB, the production read store, cannot hold this one.
          if (key.includes('\0')) return 'a key holds a NUL character (\\u0000)';
          pending.push({ value: own(v as Record<string, unknown>, key), depth, key, parent: item });
        }
      }
    }
  }
  return null;
}

/**
 * A free-form JSON field, bounded in size and depth (`bounds`), then parsed by `inner` (any JSON
 * value unless given). The bounds are checked first, so a value that breaks them costs one cheap
 * pass and `inner` never walks it; a breach is a 400 naming the field, like any validation error.
 * The OpenAPI document shows the bounds as `x-max-bytes` and `x-max-depth`.
 */
export function boundedJson<T extends z.ZodType = z.ZodUnknown>(bounds: JsonBounds, inner?: T) {
  const maxDepth = bounds.maxDepth ?? MAX_JSON_DEPTH;
  return z
    .preprocess(
      (value, ctx) => {
        const problem = jsonBoundsProblem(value, bounds);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
        return value;
      },
      (inner ?? z.unknown()) as T,
    )
    .meta({ 'x-max-bytes': bounds.maxBytes, ...(Number.isFinite(maxDepth) ? { 'x-max-depth': maxDepth } : {}) });
}
