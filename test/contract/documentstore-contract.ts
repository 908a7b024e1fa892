/**
 * What every DocumentStore adapter must do. Each test uses fresh collection (and checkpoint)
 * names, so the suite can run against a shared MongoDB.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Position } from '../../src/eventstore/port.js';
import {
  CheckpointMoved,
  type Doc,
  FenceLost,
  type DocumentStore,
  type DocWrite,
  type Filter,
  type Scalar,
  type SetAsideEvent,
  type Sort,
} from '../../src/readstore/port.js';
import { findMerged } from '../../src/readstore/paging.js';

const at = (n: bigint, prepare = n): Position => ({ commit: n, prepare });
/** Beyond 2^53: positions must survive without going through a JS number. */
const BIG = 2n ** 60n + 7n;

const put = (collection: string, id: string, doc: Doc, position = at(1n)): DocWrite => ({
  collection,
  id,
  doc,
  position,
});
/** An event set aside at `position`, as a projector records it. */
const skipped = (position: Position, error = 'malformed JSON'): SetAsideEvent => ({
  position,
  stream: 'run-1',
  revision: BIG,
  event_id: `e-${position.commit}`,
  event_type: 'RunCreated',
  metadata: {
    actor: { type: 'user', uid: 'u-1' },
    team_uid: 't-1',
    correlation_id: 'c-1',
    causation_id: null,
    request_id: 'r-1',
    occurred_at: '2026-01-01T00:00:00.000Z',
  },
  error,
  at: '2026-01-01T00:00:00.000Z',
});

const del = (collection: string, id: string, position = at(1n)): DocWrite => ({
  collection,
  id,
  doc: null,
  position,
});

/** The order both MongoDB and SQLite give single-typed keys: null (or missing) first. */
function compareKeys(a: Scalar, b: Scalar): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

function sortedIds(docs: Array<{ id: string } & Doc>, sort: Sort): string[] {
  const key = (d: Doc, path: string) => (path === 'id' ? d.id : (d[path] ?? null)) as Scalar;
  return [...docs]
    .sort((x, y) => {
      for (const [path, order] of sort) {
        const c = compareKeys(key(x, path), key(y, path));
        if (c !== 0) return order === 'asc' ? c : -c;
      }
      return 0;
    })
    .map((d) => d.id);
}

export function documentStoreContract(
  label: string,
  open: () => Promise<DocumentStore>,
  cleanup?: () => Promise<void>,
): void {
  describe(`DocumentStore contract: ${label}`, () => {
    let store: DocumentStore;
    const created: string[] = [];
    /** A collection (and checkpoint) name no other test or run uses. */
    const fresh = (): string => {
      const name = `c_${randomBytes(6).toString('hex')}`;
      created.push(name);
      return name;
    };

    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      if (store) {
        for (const name of created) await store.drop(name);
        await store.close();
      }
      await cleanup?.();
    });

    describe('collections', () => {
      it('ensureCollection is idempotent and keeps the documents', async () => {
        const name = fresh();
        const indexes = [['status'], ['nested.k', 'id']];
        await store.ensureCollection(name, indexes);
        await store.commit([put(name, 'a', { status: 'open', nested: { k: 1 } })], name, at(1n));
        await store.ensureCollection(name, indexes);
        await store.ensureCollection(name, [...indexes, ['other']]);

        expect((await store.listCollections()).filter((c) => c === name)).toEqual([name]);
        expect(await store.collection(name).get('a')).toEqual({ status: 'open', nested: { k: 1 } });
        expect(await store.collection(name).count({ status: 'open' })).toBe(1);
      });

      it('lists collections but not the checkpoints', async () => {
        const [a, b] = [fresh(), fresh()];
        await store.ensureCollection(a, []);
        await store.ensureCollection(b, []);
        const names = await store.listCollections();
        expect(names).toEqual(expect.arrayContaining([a, b]));
        expect(names).not.toContain('checkpoints');
        expect(names).not.toContain('set_aside');
      });

      it('refuses invalid collection names', async () => {
        for (const bad of ['Upper', '1abc', 'a-b', 'a"; DROP TABLE x; --', 'checkpoints', 'set_aside', '']) {
          await expect(store.ensureCollection(bad, [])).rejects.toThrow();
        }
      });

      it('drop removes the collection and its checkpoint; dropping twice is fine', async () => {
        const name = fresh();
        await store.ensureCollection(name, [['status']]);
        await store.commit([put(name, 'a', { status: 'x' })], name, at(3n));
        await store.drop(name);
        await store.drop(name);
        expect(await store.listCollections()).not.toContain(name);
        expect(await store.readCheckpoint(name)).toBeNull();
      });
    });

    describe('commit and checkpoints', () => {
      it('puts, updates and deletes documents together with the checkpoint', async () => {
        const name = fresh();
        await store.ensureCollection(name, []);
        const docs = store.collection<{ title: string; n?: number }>(name);

        await store.commit([put(name, 'a', { title: 'A' }), put(name, 'b', { title: 'B' })], name, at(1n));
        expect(await docs.get('a')).toEqual({ title: 'A' });
        expect(await docs.get('b')).toEqual({ title: 'B' });
        expect(await store.readCheckpoint(name)).toEqual(at(1n));

        await store.commit(
          [put(name, 'a', { title: 'A2', n: 2 }, at(2n)), del(name, 'b', at(2n)), del(name, 'never', at(2n))],
          name,
          at(2n, 1n),
        );
        expect(await docs.get('a')).toEqual({ title: 'A2', n: 2 });
        expect(await docs.get('b')).toBeNull();
        expect(await store.readCheckpoint(name)).toEqual(at(2n, 1n));
      });

      it('moves the checkpoint with an empty batch, and keeps bigints beyond 2^53 exact', async () => {
        const name = fresh();
        await store.commit([], name, at(BIG, BIG - 1n));
        expect(await store.readCheckpoint(name)).toEqual(at(BIG, BIG - 1n));
      });

      it('writes across several collections in one commit', async () => {
        const [a, b] = [fresh(), fresh()];
        await store.ensureCollection(a, []);
        await store.ensureCollection(b, []);
        await store.commit([put(a, '1', { x: 1 }), put(b, '1', { y: 2 })], a, at(5n));
        expect(await store.collection(a).get('1')).toEqual({ x: 1 });
        expect(await store.collection(b).get('1')).toEqual({ y: 2 });
      });

      it('writes nothing, not even the checkpoint, when a write is refused', async () => {
        const name = fresh();
        await store.ensureCollection(name, []);
        await expect(
          store.commit([put(name, 'a', { x: 1 }), put('Bad Name', 'b', { x: 2 })], name, at(9n)),
        ).rejects.toThrow();
        expect(await store.collection(name).get('a')).toBeNull();
        expect(await store.readCheckpoint(name)).toBeNull();
      });

      it('commits only over the expected checkpoint, and writes nothing otherwise', async () => {
        const name = fresh();
        await store.ensureCollection(name, []);
        await store.commit([put(name, 'a', { v: 1 })], name, at(1n), null);
        await expect(store.commit([put(name, 'a', { v: 2 }, at(2n))], name, at(2n), null)).rejects.toThrow(
          CheckpointMoved,
        );
        await expect(store.commit([put(name, 'a', { v: 2 }, at(2n))], name, at(2n), at(0n))).rejects.toThrow(
          CheckpointMoved,
        );
        expect(await store.collection(name).get('a')).toEqual({ v: 1 });
        expect(await store.readCheckpoint(name)).toEqual(at(1n));
        await store.commit([put(name, 'a', { v: 2 }, at(2n))], name, at(2n), at(1n));
        expect(await store.collection(name).get('a')).toEqual({ v: 2 });
      });

      it('commits several read models and their checkpoints at once; a moved checkpoint is named and its part not written', async () => {
        const [a, b] = [fresh(), fresh()];
        await store.ensureCollection(a, []);
        await store.ensureCollection(b, []);
        await store.commitAll([
          { writes: [put(a, '1', { x: 1 })], checkpoint: a, position: at(3n), expected: null },
          { writes: [put(b, '1', { y: 1 })], checkpoint: b, position: at(3n) },
        ]);
        expect(await store.readCheckpoint(a)).toEqual(at(3n));
        expect(await store.readCheckpoint(b)).toEqual(at(3n));
        expect(await store.collection(b).get('1')).toEqual({ y: 1 });

        const moved = store.commitAll([
          { writes: [put(a, '2', { x: 2 }, at(4n))], checkpoint: a, position: at(4n), expected: at(3n) },
          { writes: [put(b, '2', { y: 2 }, at(4n))], checkpoint: b, position: at(4n), expected: at(1n) },
        ]);
        await expect(moved).rejects.toThrow(CheckpointMoved);
        await expect(moved).rejects.toMatchObject({ checkpointName: b });
        expect(await store.collection(b).get('2')).toBeNull();
        expect(await store.readCheckpoint(b)).toEqual(at(3n));
      });

      it('records set-aside events with the checkpoint, by checkpoint and position; the same position again replaces it', async () => {
        const [a, b] = [fresh(), fresh()].sort();
        await store.ensureCollection(a!, []);
        await store.ensureCollection(b!, []);
        await store.commitAll([
          {
            writes: [put(a!, '1', { x: 1 }, at(2n))],
            checkpoint: a!,
            position: at(3n),
            setAside: [skipped(at(3n)), skipped(at(BIG))],
          },
          { writes: [], checkpoint: b!, position: at(3n), setAside: [skipped(at(1n))] },
        ]);
        await store.commitAll([{ writes: [], checkpoint: a!, position: at(4n), setAside: [skipped(at(3n), 'again')] }]);

        expect(await store.readCheckpoint(a!)).toEqual(at(4n));
        const mine = (await store.listSetAside()).filter((e) => e.checkpoint === a || e.checkpoint === b);
        expect(mine).toEqual([
          { ...skipped(at(3n), 'again'), checkpoint: a },
          { ...skipped(at(BIG)), checkpoint: a },
          { ...skipped(at(1n)), checkpoint: b },
        ]);
        expect(await store.listSetAside(a, 1)).toEqual([{ ...skipped(at(3n), 'again'), checkpoint: a }]);
        const counts = await store.countSetAside();
        expect([counts.get(a!), counts.get(b!)]).toEqual([2, 1]);
        expect(await store.listSetAside(fresh())).toEqual([]);

        // One record forgotten (a reactor's retry did it); the others stay.
        expect(await store.clearSetAside(a!, at(BIG))).toBe(true);
        expect(await store.clearSetAside(a!, at(BIG))).toBe(false);
        expect(await store.listSetAside(a)).toEqual([{ ...skipped(at(3n), 'again'), checkpoint: a }]);
        expect(await store.listSetAside(b)).toEqual([{ ...skipped(at(1n)), checkpoint: b }]);
      });

      it('reads an unknown checkpoint as null and lists checkpoints by name', async () => {
        const [a, b] = [fresh(), fresh()].sort();
        expect(await store.readCheckpoint(a!)).toBeNull();
        await store.commit([], b!, at(BIG));
        await store.commit([], a!, at(4n, 3n));
        const mine = (await store.listCheckpoints()).filter((c) => c.name === a || c.name === b);
        expect(mine).toEqual([
          { name: a, position: at(4n, 3n) },
          { name: b, position: at(BIG) },
        ]);
      });
    });

    describe('filters', () => {
      let name: string;
      const filterDocs: Record<string, Doc> = {
        a: {
          name: 'Alpha (Beta)',
          n: 1,
          flag: true,
          tag: 'x',
          nested: { k: 'p', v: 10 },
          maybe: null,
          list: ['p', 'q', 3],
        },
        b: { name: 'bravo.*', n: 2, flag: false, tag: 'y', nested: { k: 'q', v: 20 }, list: ['3'] },
        c: { name: 'ÄRGER charlie', n: 3, flag: true, nested: { k: 'p', v: 30 }, maybe: 'set' },
        d: { name: 'delta', n: '3', tag: null },
        e: { name: 'echo', n: 1.5, flag: 1 },
      };

      beforeAll(async () => {
        name = fresh();
        await store.ensureCollection(name, [['tag'], ['nested.k', 'n']]);
        await store.commit(
          Object.entries(filterDocs).map(([id, doc]) => put(name, id, doc)),
          name,
          at(1n),
        );
      });

      const cases: Array<[string, Filter, string[]]> = [
        ['scalar equality', { tag: 'x' }, ['a']],
        ['equality to true is not equality to 1', { flag: true }, ['a', 'c']],
        ['equality to false', { flag: false }, ['b']],
        ['equality to 1 is not equality to true', { flag: 1 }, ['e']],
        ['a number never equals a string', { n: 3 }, ['c']],
        ['a string never equals a number', { n: '3' }, ['d']],
        ['$eq', { n: { $eq: 1 } }, ['a']],
        ['null matches null and missing', { tag: null }, ['c', 'd', 'e']],
        ['$eq null', { tag: { $eq: null } }, ['c', 'd', 'e']],
        ['$ne null: present and not null', { tag: { $ne: null } }, ['a', 'b']],
        ['$ne matches a missing field', { tag: { $ne: 'x' } }, ['b', 'c', 'd', 'e']],
        ['$in with null', { tag: { $in: ['x', null] } }, ['a', 'c', 'd', 'e']],
        ['$in across types', { n: { $in: [2, '3', true] } }, ['b', 'd']],
        ['$in [] matches nothing', { tag: { $in: [] } }, []],
        ['$nin [] matches everything', { tag: { $nin: [] } }, ['a', 'b', 'c', 'd', 'e']],
        ['$nin matches a missing field', { tag: { $nin: ['x'] } }, ['b', 'c', 'd', 'e']],
        ['$nin with null', { tag: { $nin: ['x', null] } }, ['b']],
        ['$gt compares numbers with numbers only', { n: { $gt: 1 } }, ['b', 'c', 'e']],
        ['$gte and $lt together', { n: { $gte: 1, $lt: 3 } }, ['a', 'b', 'e']],
        ['$lte', { n: { $lte: 1.5 } }, ['a', 'e']],
        ['string range', { name: { $gte: 'bravo', $lt: 'delta' } }, ['b']],
        ['$exists true includes null', { maybe: { $exists: true } }, ['a', 'c']],
        ['$exists false', { maybe: { $exists: false } }, ['b', 'd', 'e']],
        ['nested equality', { 'nested.k': 'p' }, ['a', 'c']],
        ['nested range', { 'nested.v': { $gte: 20 } }, ['b', 'c']],
        ['nested missing is null', { 'nested.k': null }, ['d', 'e']],
        ['$contains ignores case', { name: { $contains: 'ALPHA' } }, ['a']],
        ['$contains takes regex characters literally', { name: { $contains: 'BRAVO.*' } }, ['b']],
        ['$contains with a dot', { name: { $contains: '.' } }, ['b']],
        ['$contains with parentheses', { name: { $contains: '(beta)' } }, ['a']],
        ['$contains ignores case beyond ASCII', { name: { $contains: 'ärger' } }, ['c']],
        ['$contains matches strings only', { n: { $contains: '3' } }, ['d']],
        ['$or', { $or: [{ tag: 'x' }, { 'nested.v': 30 }] }, ['a', 'c']],
        ['$or with another field', { flag: true, $or: [{ tag: 'x' }, { n: 2 }] }, ['a']],
        ['$or [] matches nothing', { $or: [] }, []],
        ['$and', { $and: [{ n: { $gte: 1 } }, { n: { $lte: 2 } }] }, ['a', 'b', 'e']],
        ['nested $or in $and', { $and: [{ $or: [{ tag: 'y' }, { tag: 'x' }] }, { flag: false }] }, ['b']],
        ['undefined conditions are ignored', { tag: undefined }, ['a', 'b', 'c', 'd', 'e']],
        ['undefined operators are ignored', { n: { $gt: undefined, $lt: 2 } }, ['a', 'e']],
        ['$has finds an element of an array', { list: { $has: 'q' } }, ['a']],
        ['$has compares within a type bracket', { list: { $has: 3 } }, ['a']],
        ['$has does not match a scalar field', { tag: { $has: 'x' } }, []],
        ['$hasAny finds arrays holding any of the values', { list: { $hasAny: ['zz', 'q', 3] } }, ['a']],
        ['$hasAny compares within a type bracket', { list: { $hasAny: [3, 'p'] } }, ['a']],
        ['$hasAny matches each array once', { list: { $hasAny: ['p', 'q', '3'] } }, ['a', 'b']],
        ['$hasAny of nothing matches nothing', { list: { $hasAny: [] } }, []],
        ['$hasAny does not match a scalar field', { tag: { $hasAny: ['x'] } }, []],
        ['id is the document id', { id: { $in: ['a', 'c', 'zz'] } }, ['a', 'c']],
        ['empty filter', {}, ['a', 'b', 'c', 'd', 'e']],
      ];

      it.each(cases)('%s', async (_title, filter, expected) => {
        const docs = store.collection(name);
        const page = await docs.find({ filter, sort: [['id', 'asc']], limit: 100 });
        // The documents differ from each other, so comparing documents compares ids.
        expect(page.items).toEqual(expected.map((id) => filterDocs[id]));
        expect(page.next).toBeNull();
        expect(await docs.count(filter)).toBe(expected.length);
      });

      it('refuses bad paths and operators', async () => {
        const docs = store.collection(name);
        const bad: unknown[] = [
          { "a') OR 1=1 --": 1 },
          { 'a.b;': 1 },
          { $where: 'true' },
          { n: { $regex: '.*' } },
          { n: { a: 1 } },
          { $or: { tag: 'x' } },
        ];
        for (const filter of bad) await expect(docs.count(filter as Filter)).rejects.toThrow();
      });
    });

    describe('find, count, get', () => {
      interface Item {
        id: string;
        group?: number | null;
        score: number;
        [key: string]: unknown;
      }
      let name: string;
      const items: Item[] = Array.from({ length: 23 }, (_, i) => ({
        id: `i${String((i * 7) % 23).padStart(2, '0')}`,
        // Many ties in the first key, and a few documents without it.
        ...(i % 6 === 5 ? {} : { group: i % 3 === 0 ? null : i % 4 }),
        score: (i * 5) % 4,
      }));

      beforeAll(async () => {
        name = fresh();
        await store.ensureCollection(name, [['group', 'score', 'id']]);
        // `key` repeats the id so that pages can be checked from the documents alone.
        await store.commit(
          items.map(({ id, ...doc }) => put(name, id, { ...doc, key: id })),
          name,
          at(1n),
        );
      });

      async function allPages(sort: Sort, limit: number, filter?: Filter): Promise<string[]> {
        const seen: string[] = [];
        let after: Scalar[] | undefined;
        for (let pages = 0; pages < 100; pages++) {
          const page = await store.collection(name).find({ filter, sort, limit, after });
          expect(page.items.length).toBeLessThanOrEqual(limit);
          seen.push(...page.items.map((d) => String(d.key)));
          if (!page.next) return seen;
          expect(page.items.length).toBe(limit);
          after = page.next;
        }
        throw new Error('paging did not end');
      }

      const sorts: Sort[] = [
        [['id', 'asc']],
        [['id', 'desc']],
        [
          ['group', 'asc'],
          ['score', 'desc'],
          ['id', 'asc'],
        ],
        [
          ['group', 'desc'],
          ['score', 'asc'],
          ['id', 'desc'],
        ],
        [
          ['score', 'desc'],
          ['group', 'desc'],
          ['id', 'asc'],
        ],
      ];

      it.each(sorts.flatMap((sort) => [1, 4, 23, 30].map((limit) => [JSON.stringify(sort), limit, sort] as const)))(
        'pages through every item exactly once, in order: %s by %i',
        async (_title, limit, sort) => {
          expect(await allPages(sort, limit)).toEqual(sortedIds(items, sort));
        },
      );

      it('pages a filtered find', async () => {
        const sort: Sort = [
          ['score', 'asc'],
          ['id', 'desc'],
        ];
        const filter: Filter = { score: { $gte: 1 }, group: { $ne: null } };
        const expected = sortedIds(
          items.filter((d) => d.score >= 1 && d.group != null),
          sort,
        );
        expect(expected.length).toBeGreaterThan(3);
        expect(await allPages(sort, 3, filter)).toEqual(expected);
      });

      it('gives next as the sort-key values of the last item', async () => {
        const sort: Sort = [
          ['group', 'desc'],
          ['id', 'asc'],
        ];
        const page = await store.collection(name).find({ sort, limit: 2 });
        const lastId = sortedIds(items, sort)[1]!;
        const last = items.find((d) => d.id === lastId)!;
        expect(page.next).toEqual([last.group ?? null, lastId]);
      });

      it('refuses a cursor that does not fit the sort', async () => {
        await expect(
          store.collection(name).find({ sort: [['id', 'asc']], limit: 2, after: ['x', 'y'] }),
        ).rejects.toThrow();
      });

      it('counts', async () => {
        const docs = store.collection(name);
        expect(await docs.count()).toBe(items.length);
        expect(await docs.count({ score: 0 })).toBe(items.filter((d) => d.score === 0).length);
      });

      it('getMany returns the documents found, keyed by id', async () => {
        const ids = ['i00', 'i05', 'missing', 'i05'];
        const found = await store.collection(name).getMany(ids);
        expect([...found.keys()].sort()).toEqual(['i00', 'i05']);
        expect(found.get('i05')).toMatchObject({ score: items.find((d) => d.id === 'i05')!.score });
        expect((await store.collection(name).getMany([])).size).toBe(0);
      });

      it('get returns null for a missing id', async () => {
        expect(await store.collection(name).get('missing')).toBeNull();
      });
    });

    describe('a bound on the documents walked (maxScan)', () => {
      let name: string;
      const id = (i: number) => `w${String(i).padStart(2, '0')}`;
      // Fifty documents of team a, ten of team b; three of a and one of b are rare.
      const rare = new Set([7, 45, 46, 55]);
      beforeAll(async () => {
        name = fresh();
        await store.ensureCollection(name, [['team']]);
        await store.commit(
          Array.from({ length: 60 }, (_, i) =>
            put(name, id(i), { key: id(i), team: i < 50 ? 'a' : 'b', tag: rare.has(i) ? 'rare' : 'common' }),
          ),
          name,
          at(1n),
        );
      });
      const sort: Sort = [['id', 'asc']];
      const rareOf = (team: string): Filter => ({ team, tag: 'rare' });
      const keys = (page: { items: Doc[] }) => page.items.map((d) => d.key);

      it('walks at most maxScan documents the index finds; a page cut short says where it stopped', async () => {
        const find = (after?: Scalar[]) =>
          store.collection(name).find({ filter: rareOf('a'), sort, limit: 10, maxScan: 20, after });
        const first = await find();
        expect({ keys: keys(first), next: first.next }).toEqual({ keys: [id(7)], next: [id(19)] });
        const second = await find(first.next!);
        expect({ keys: keys(second), next: second.next }).toEqual({ keys: [], next: [id(39)] });
        const third = await find(second.next!);
        expect({ keys: keys(third), next: third.next }).toEqual({ keys: [id(45), id(46)], next: null });
      });

      it('stops early when the page fills, and pages on from its last item', async () => {
        const find = (after?: Scalar[]) =>
          store.collection(name).find({ filter: rareOf('a'), sort, limit: 2, maxScan: 100, after });
        const first = await find();
        expect({ keys: keys(first), next: first.next }).toEqual({ keys: [id(7), id(45)], next: [id(45)] });
        const second = await find(first.next!);
        expect({ keys: keys(second), next: second.next }).toEqual({ keys: [id(46)], next: null });
      });

      it('is no bound on a filter the index serves whole', async () => {
        const page = await store.collection(name).find({ filter: { team: 'b' }, sort, limit: 50, maxScan: 3 });
        expect(page.items).toHaveLength(10);
        expect(page.next).toBeNull();
      });

      it('merged pages are complete up to the earliest place a page stopped', async () => {
        const seen: unknown[] = [];
        let after: Scalar[] | undefined;
        for (let pages = 0; pages < 20; pages++) {
          const page = await findMerged(
            store.collection(name),
            [rareOf('a'), rareOf('b')],
            { sort, limit: 10, maxScan: 20, after },
            (d) => String(d.key),
          );
          seen.push(...keys(page));
          if (!page.next) break;
          after = page.next;
        }
        expect(seen).toEqual([id(7), id(45), id(46), id(55)]);
      });
    });

    it('scans every document in id order', async () => {
      const name = fresh();
      await store.ensureCollection(name, []);
      // More than one page of any reasonable batch size, written out of order.
      const ids = Array.from({ length: 1234 }, (_, i) => `s${String((i * 389) % 1234).padStart(4, '0')}`);
      await store.commit(
        ids.map((id) => put(name, id, { id2: id })),
        name,
        at(1n),
      );
      const seen: string[] = [];
      for await (const [id, doc] of store.collection(name).scan()) {
        expect(doc).toEqual({ id2: id });
        seen.push(id);
      }
      expect(seen).toEqual([...ids].sort());
    });

    describe('promote', () => {
      it('replaces the target and its checkpoint by the source', async () => {
        const [live, shadow] = [fresh(), fresh()];
        await store.ensureCollection(live, [['status']]);
        await store.commit([put(live, 'old', { status: 'x' })], live, at(10n));
        await store.ensureCollection(shadow, [['status'], ['nested.k', 'id']]);
        await store.commit([put(shadow, 'new', { status: 'y', nested: { k: 1 } })], shadow, at(12n, 11n));

        await store.promote(shadow, live);

        const names = await store.listCollections();
        expect(names).toContain(live);
        expect(names).not.toContain(shadow);
        expect(await store.collection(live).get('old')).toBeNull();
        expect(await store.collection(live).get('new')).toEqual({ status: 'y', nested: { k: 1 } });
        expect(await store.collection(live).count({ status: 'y' })).toBe(1);
        expect(await store.readCheckpoint(live)).toEqual(at(12n, 11n));
        expect(await store.readCheckpoint(shadow)).toBeNull();

        // The promoted collection is the target in every way: ensuring it again changes nothing.
        await store.ensureCollection(live, [['status'], ['nested.k', 'id']]);
        expect(await store.collection(live).count()).toBe(1);
      });

      it("replaces the target's set-aside events by the source's; drop removes them", async () => {
        const [live, shadow] = [fresh(), fresh()];
        await store.ensureCollection(live, []);
        await store.commitAll([{ writes: [], checkpoint: live, position: at(5n), setAside: [skipped(at(2n))] }]);
        await store.ensureCollection(shadow, []);
        await store.commitAll([{ writes: [], checkpoint: shadow, position: at(6n), setAside: [skipped(at(4n))] }]);

        await store.promote(shadow, live);
        expect(await store.listSetAside(live)).toEqual([{ ...skipped(at(4n)), checkpoint: live }]);
        expect(await store.listSetAside(shadow)).toEqual([]);

        await store.drop(live);
        expect(await store.listSetAside(live)).toEqual([]);
        expect((await store.countSetAside()).has(live)).toBe(false);
      });

      it('creates the target when it does not exist', async () => {
        const [target, source] = [fresh(), fresh()];
        await store.ensureCollection(source, []);
        await store.commit([put(source, 'a', { v: 1 })], source, at(3n));
        await store.promote(source, target);
        expect(await store.collection(target).get('a')).toEqual({ v: 1 });
        expect(await store.readCheckpoint(target)).toEqual(at(3n));
      });

      it('refuses a missing source and leaves the target alone', async () => {
        const [target, source] = [fresh(), fresh()];
        await store.ensureCollection(target, []);
        await store.commit([put(target, 'a', { v: 1 })], target, at(3n));
        await expect(store.promote(source, target)).rejects.toThrow();
        expect(await store.collection(target).get('a')).toEqual({ v: 1 });
        expect(await store.readCheckpoint(target)).toEqual(at(3n));
      });
    });

    describe('shared state: conditional updates, removals and fenced commits', () => {
      it('creates a document only with upsert, then sets and increments its fields', async () => {
        const name = fresh();
        await store.ensureCollection(name, []);
        expect(await store.update(name, 'a', { set: { holder: 'p1' } })).toBeNull();
        expect(await store.collection(name).get('a')).toBeNull();

        expect(
          await store.update(name, 'a', { set: { holder: 'p1', list: [1, 'x'] }, inc: { token: 1 }, upsert: true }),
        ).toEqual({ holder: 'p1', list: [1, 'x'], token: 1 });
        expect(await store.update(name, 'a', { set: { beat: 'b' }, inc: { token: 2, other: -1 } })).toEqual({
          holder: 'p1',
          list: [1, 'x'],
          token: 3,
          beat: 'b',
          other: -1,
        });
        expect(await store.collection(name).get('a')).toEqual({
          holder: 'p1',
          list: [1, 'x'],
          token: 3,
          beat: 'b',
          other: -1,
        });
      });

      it('writes only while `when` holds on the stored document; a missing one is created by upsert whatever `when` says', async () => {
        const name = fresh();
        await store.ensureCollection(name, [['token']]);
        expect(
          await store.update(name, 'l', { when: { token: 7 }, set: { holder: 'p1' }, inc: { token: 1 }, upsert: true }),
        ).toEqual({
          holder: 'p1',
          token: 1,
        });
        // Stored now: `when` decides, with or without upsert.
        for (const upsert of [false, true])
          expect(await store.update(name, 'l', { when: { token: 0 }, set: { holder: 'p2' }, upsert })).toBeNull();
        expect(
          await store.update(name, 'l', { when: { holder: 'p1', token: { $gte: 1 } }, set: { holder: 'p2' } }),
        ).toEqual({
          holder: 'p2',
          token: 1,
        });
        expect(
          await store.update(name, 'l', {
            when: { $or: [{ holder: null }, { gone: { $exists: true } }] },
            set: { holder: 'p3' },
          }),
        ).toBeNull();
        expect(await store.collection(name).get('l')).toEqual({ holder: 'p2', token: 1 });
      });

      it('refuses updates that write nothing or name odd fields, and increments of what is not a number', async () => {
        const name = fresh();
        await store.ensureCollection(name, []);
        for (const bad of [
          {},
          { set: {} },
          { set: { 'a.b': 1 } },
          { set: { $where: 1 } },
          { set: { id: 'x' } },
          { inc: { n: Number.NaN } },
        ])
          await expect(store.update(name, 'a', { ...bad, upsert: true })).rejects.toThrow();
        await store.update(name, 'a', { set: { n: 'text' }, upsert: true });
        await expect(store.update(name, 'a', { inc: { n: 1 } })).rejects.toThrow();
        expect(await store.collection(name).get('a')).toEqual({ n: 'text' });
      });

      it('counts every one of many concurrent increments, through several handles', async () => {
        const name = fresh();
        await store.ensureCollection(name, []);
        const other = await open();
        try {
          await Promise.all(
            Array.from({ length: 60 }, (_, i) =>
              (i % 2 ? other : store).update(name, 'counter', { inc: { n: 1 }, upsert: true }),
            ),
          );
          expect(await store.collection(name).get('counter')).toEqual({ n: 60 });
        } finally {
          await other.close();
        }
      });

      it('lets exactly one of concurrent compare-and-set writers win', async () => {
        const name = fresh();
        await store.ensureCollection(name, []);
        await store.update(name, 'cas', { set: { v: 0, by: null }, upsert: true });
        const other = await open();
        try {
          const results = await Promise.all(
            Array.from({ length: 10 }, (_, i) =>
              (i % 2 ? other : store).update(name, 'cas', { when: { v: 0 }, set: { by: `w${i}` }, inc: { v: 1 } }),
            ),
          );
          expect(results.filter((r) => r !== null)).toHaveLength(1);
          expect(await store.collection(name).get('cas')).toMatchObject({ v: 1 });
        } finally {
          await other.close();
        }
      });

      it('removes a document only when it matches', async () => {
        const name = fresh();
        await store.ensureCollection(name, [['seen']]);
        await store.update(name, 'w', { set: { seen: 10 }, upsert: true });
        expect(await store.remove(name, 'w', { seen: { $lt: 5 } })).toBe(false);
        expect(await store.remove(name, 'nobody')).toBe(false);
        expect(await store.collection(name).get('w')).toEqual({ seen: 10 });
        expect(await store.remove(name, 'w', { seen: { $lt: 20 } })).toBe(true);
        expect(await store.collection(name).get('w')).toBeNull();
      });

      it('commits under a fence only while its document matches, and writes nothing otherwise', async () => {
        const [leases, docs] = [fresh(), fresh()];
        await store.ensureCollection(leases, []);
        await store.ensureCollection(docs, []);
        await store.update(leases, 'projector', { set: { holder: 'p1' }, inc: { token: 1 }, upsert: true });
        const fence = { collection: leases, id: 'projector', when: { holder: 'p1', token: 1 } };
        await store.commitAll([{ writes: [put(docs, 'a', { v: 1 })], checkpoint: docs, position: at(1n) }], fence);
        expect(await store.collection(docs).get('a')).toEqual({ v: 1 });

        // Taken over: the old holder's commit is refused whole.
        await store.update(leases, 'projector', { when: { token: 1 }, set: { holder: 'p2' }, inc: { token: 1 } });
        const stale = store.commitAll(
          [{ writes: [put(docs, 'a', { v: 2 }, at(2n))], checkpoint: docs, position: at(2n) }],
          fence,
        );
        await expect(stale).rejects.toThrow(FenceLost);
        expect(await store.collection(docs).get('a')).toEqual({ v: 1 });
        expect(await store.readCheckpoint(docs)).toEqual(at(1n));
        await expect(store.commitAll([], { collection: leases, id: 'nobody', when: { holder: 'p1' } })).rejects.toThrow(
          FenceLost,
        );
      });
    });
  });
}
