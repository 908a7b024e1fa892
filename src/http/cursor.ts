/**
 * Opaque page cursors: base64url JSON of the keyset values and the sort they were issued under,
 * so a cursor presented with another sort is refused instead of silently skipping items.
 */
import { InvalidRequest } from '../kernel/errors.js';
import type { Scalar, Sort } from '../readstore/port.js';

export interface PageInfo {
  has_next_page: boolean;
  next_cursor: string | null;
}

const signature = (sort: Sort) => sort.map(([field, order]) => `${field}:${order}`).join(',');

const isScalar = (v: unknown): v is Scalar => v === null || ['string', 'number', 'boolean'].includes(typeof v);

const invalid = (message: string) =>
  new InvalidRequest(`cursor is not valid: ${message}`, [{ path: 'querystring.cursor', message }], 'invalid_cursor');

const encodeCursor = (sort: Sort, values: readonly Scalar[]): string =>
  Buffer.from(JSON.stringify({ s: signature(sort), v: values })).toString('base64url');

/** The keyset values of a cursor issued under `sort`; a 400 for anything else. */
export function decodeCursor(cursor: string | undefined, sort: Sort): Scalar[] | undefined {
  if (cursor === undefined) return undefined;
  let parsed: { s?: unknown; v?: unknown } | null = null;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid('malformed cursor');
  }
  if (!parsed || typeof parsed !== 'object' || !Array.isArray(parsed.v)) throw invalid('malformed cursor');
  if (parsed.s !== signature(sort)) throw invalid('issued for another sort_by or sort_order; omit it to restart');
  if (parsed.v.length !== sort.length || !parsed.v.every(isScalar)) throw invalid('malformed cursor');
  return parsed.v;
}

export const pageInfo = (sort: Sort, next: readonly Scalar[] | null): PageInfo => ({
  has_next_page: next !== null,
  next_cursor: next === null ? null : encodeCursor(sort, next),
});
