/** The sort keys of a document, as both adapters give them in a page's `next`. */
import type { Doc, Scalar } from './port.js';
import { own } from '../own-keys.js';

/** The sort-key value of a document; `id` is the document id, a missing field is null. */
export function sortKeyValue(id: string, doc: Doc, path: string): Scalar {
  if (path === 'id') return id;
  let value: unknown = doc;
  for (const segment of path.split('.')) {
    value = value !== null && typeof value === 'object' ? own(value as Doc, segment) : undefined;
  }
  if (value === undefined || value === null) return null;
  if (['string', 'number', 'boolean'].includes(typeof value)) return value as Scalar;
  throw new Error(`sort key ${path} of ${id} is not a scalar`);
}
