/** Reading every document a query matches, page by page over the keyset cursor. */
import type { Collection, Doc, Filter, FindQuery, Page, Scalar } from './port.js';
import { own } from '../own-keys.js';

/**
 * Every document `query` matches, in its sort order. Each page is a read of its own, so the
 * caller may write between documents; the cursor sits past them. Between pages the event loop
 * turns: an embedded store reads synchronously, and a year of documents gathered without a turn
 * held every other request (and tripped load shedding) for seconds.
 */
export async function* findEach<T extends Doc>(
  collection: Collection<T>,
  query: Omit<FindQuery, 'after'>,
): AsyncGenerator<T> {
  let after: Scalar[] | undefined;
  do {
    const page = await collection.find({ ...query, after });
    yield* page.items;
    after = page.next ?? undefined;
    if (after) await new Promise<void>((resolve) => setImmediate(resolve));
  } while (after);
}

/** `findEach`, gathered. */
export async function findAll<T extends Doc>(collection: Collection<T>, query: Omit<FindQuery, 'after'>): Promise<T[]> {
  const all: T[] = [];
  for await (const doc of findEach(collection, query)) all.push(doc);
  return all;
}

/** The order both stores sort scalars in: null, then numbers, then strings (by UTF-8 bytes, as SQLite and MongoDB compare them). */
function compareScalars(a: Scalar, b: Scalar): number {
  if (a === b) return 0;
  const rank = (v: Scalar) => (v === null ? 0 : typeof v === 'number' || typeof v === 'boolean' ? 1 : 2);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 1) return Number(a) - Number(b);
  const x = a as string;
  const y = b as string;
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const cx = x.charCodeAt(i);
    const cy = y.charCodeAt(i);
    if (cx === cy) continue;
    // A surrogate (a code point past U+FFFF) sorts after every other unit in UTF-8, whatever UTF-16 says.
    const sx = cx >= 0xd800 && cx <= 0xdfff;
    const sy = cy >= 0xd800 && cy <= 0xdfff;
    if (sx !== sy) return sx ? 1 : -1;
    return cx - cy;
  }
  return x.length - y.length;
}

function keyOf(id: string, doc: Doc, path: string): Scalar {
  if (path === 'id') return id;
  let value: unknown = doc;
  for (const segment of path.split('.'))
    value = value !== null && typeof value === 'object' ? own(value as Doc, segment) : undefined;
  return value === undefined ? null : (value as Scalar);
}

/**
 * One page of the documents matching any of `filters`, in the order of `sort`: each filter is
 * read as a page of its own (each an index seek when an index leads with its equalities and
 * ends with the sort), and the pages are merged. This is how a list whose visibility is an OR
 * (a team's runs, or the caller's personal ones) costs what its page costs: one `$or` filter
 * cannot be read in sort order from any one index, so the store would sort every match.
 * `idOf` gives a document's id (the last sort key, `id`); a document matched by two filters is listed once.
 */
export async function findMerged<T extends Doc>(
  collection: Collection<T>,
  filters: readonly Filter[],
  query: Omit<FindQuery, 'filter'>,
  idOf: (doc: T) => string,
): Promise<Page<T>> {
  if (filters.length === 1) return collection.find({ ...query, filter: filters[0] });
  const pages = await Promise.all(filters.map((filter) => collection.find({ ...query, filter })));
  const compare = (a: Scalar[], b: Scalar[]) => {
    for (let i = 0; i < query.sort.length; i++) {
      const c = compareScalars(a[i]!, b[i]!);
      if (c !== 0) return query.sort[i]![1] === 'desc' ? -c : c;
    }
    return 0;
  };
  // Each page is complete up to where it stopped (its `next`); the merge is complete up to the
  // earliest of those, and what lies beyond is read again by the next page.
  const cut = pages
    .map((p) => p.next)
    .filter((n): n is Scalar[] => n !== null)
    .reduce<Scalar[] | null>((min, n) => (min === null || compare(n, min) < 0 ? n : min), null);
  const keyed = new Map<string, { doc: T; keys: Scalar[] }>();
  for (const page of pages)
    for (const doc of page.items) {
      const id = idOf(doc);
      const keys = query.sort.map(([path]) => keyOf(id, doc, path));
      if (!keyed.has(id) && (cut === null || compare(keys, cut) <= 0)) keyed.set(id, { doc, keys });
    }
  const merged = [...keyed.values()].sort((a, b) => compare(a.keys, b.keys));
  if (merged.length > query.limit) {
    const page = merged.slice(0, query.limit);
    return { items: page.map((m) => m.doc), next: page.at(-1)!.keys };
  }
  return { items: merged.map((m) => m.doc), next: cut };
}
