/** Reading every document a query matches, page by page over the keyset cursor. */
import type { Collection, Doc, FindQuery, Scalar } from './port.js';

/**
 * Every document `query` matches, in its sort order. Each page is a read of its own, so the
 * caller may write between documents; the cursor sits past them.
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
  } while (after);
}

/** `findEach`, gathered. */
export async function findAll<T extends Doc>(collection: Collection<T>, query: Omit<FindQuery, 'after'>): Promise<T[]> {
  const all: T[] = [];
  for await (const doc of findEach(collection, query)) all.push(doc);
  return all;
}
