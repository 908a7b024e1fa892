/**
 * The MongoDB document store. Collections map 1:1; a document is stored with `_id` = its id and
 * `_pos` = the position of the event that last wrote it. MongoDB has no cheap multi-collection
 * transaction outside replica sets, so every document write is guarded by its position instead:
 * replaying events after a crash (the checkpoint is written last) never moves a document back.
 * Events a read model set aside are kept in `set_aside`, one document per checkpoint and position,
 * written before the checkpoint too, so a replay after a crash records them again in place.
 */
import {
  MongoBulkWriteError,
  MongoClient,
  MongoServerError,
  type AnyBulkWriteOperation,
  type Document,
  type Filter as MongoFilter,
} from 'mongodb';
import { comparePositions, type Position } from '../eventstore/port.js';
import {
  CheckpointMoved,
  FenceLost,
  samePosition,
  type CheckpointedWrites,
  type Collection,
  type Condition,
  type Doc,
  type DocumentStore,
  type Fence,
  type Filter,
  type FindQuery,
  type Page,
  type Scalar,
  type Sort,
  type Update,
} from './port.js';
import { checkUpdate } from './update.js';
import { decodeSetAside, encodeSetAside, SET_ASIDE, type StoredSetAside } from './set-aside.js';
import { type DeclaredIndex, orderingIndex, splitByIndex } from './index-choice.js';
import { own, putOwn } from '../own-keys.js';

/** The stages of a winning plan, outermost first: `IXSCAN {"field": 1, ...}`, `COLLSCAN`, `SORT`. */
function planStages(stage: Document | undefined): string[] {
  if (!stage) return [];
  const own = stage.stage === 'IXSCAN' ? `IXSCAN ${JSON.stringify(stage.keyPattern)}` : String(stage.stage);
  const children = [stage.inputStage, ...((stage.inputStages as Document[] | undefined) ?? [])].filter(Boolean);
  return [own, ...children.flatMap((c) => planStages(c as Document))];
}

/** Positions as 20-digit zero-padded strings: string order equals numeric order up to 2^64. */
interface StoredPosition {
  commit: string;
  prepare: string;
}
type Stored = Document & { _id: string; _pos?: StoredPosition };
type SetAsideDoc = StoredSetAside & { checkpoint: string };
interface CheckpointDoc {
  _id: string;
  commit: string;
  prepare: string;
}

const CHECKPOINTS = 'checkpoints';
const COLLECTION_NAME = /^[a-z][a-z0-9_]*$/;
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
const DUPLICATE_KEY = 11000;
const NAMESPACE_EXISTS = 48;
/** Matches no document (MongoDB refuses an empty `$or`). */
const NOTHING: Document = { _id: { $in: [] } };

function assertCollectionName(name: string): void {
  if (!COLLECTION_NAME.test(name) || name === CHECKPOINTS || name === SET_ASIDE) {
    throw new Error(`invalid collection name: ${JSON.stringify(name)}`);
  }
}

function pad(n: bigint): string {
  if (n < 0n) throw new RangeError(`a document position cannot be negative: ${n}`);
  return n.toString().padStart(20, '0');
}

/** `id` is the document id; paths are validated so a filter cannot smuggle in `$where` & co. */
function fieldName(path: string): string {
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
function afterFilter(sort: Sort, after: readonly Scalar[]): Document {
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

function sortKeyValue(id: string, doc: Doc, path: string): Scalar {
  if (path === 'id') return id;
  let value: unknown = doc;
  for (const segment of path.split('.')) {
    value = value !== null && typeof value === 'object' ? own(value as Doc, segment) : undefined;
  }
  if (value === undefined || value === null) return null;
  if (['string', 'number', 'boolean'].includes(typeof value)) return value as Scalar;
  throw new Error(`sort key ${path} of ${id} is not a scalar`);
}

const strip = <T extends Doc>(stored: Stored): T => {
  const { _id, _pos, ...doc } = stored;
  return doc as T;
};

/** A write applies only over an older version (or none): guarded by (commit, prepare). */
const olderThan = (pos: StoredPosition): Document => ({
  $or: [
    { _pos: { $exists: false } },
    { '_pos.commit': { $lt: pos.commit } },
    { '_pos.commit': pos.commit, '_pos.prepare': { $lt: pos.prepare } },
  ],
});

/** A duplicate key on an upsert means the guard found a newer document: nothing to do. */
function onlyStaleWrites(error: unknown): boolean {
  if (!(error instanceof MongoBulkWriteError) || error.err) return false;
  const errors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
  return errors.length > 0 && errors.every((e) => e.code === DUPLICATE_KEY);
}

export async function openMongoDocumentStore(url: string, dbName?: string): Promise<DocumentStore> {
  const client = new MongoClient(url);
  await client.connect();
  const db = client.db(dbName);
  const checkpoints = db.collection<CheckpointDoc>(CHECKPOINTS);
  const setAside = db.collection<SetAsideDoc>(SET_ASIDE);
  await setAside.createIndex({ checkpoint: 1, key: 1 }, { unique: true });
  const docs = (name: string) => {
    assertCollectionName(name);
    return db.collection<Stored>(name);
  };
  const declared = new Map<string, DeclaredIndex[]>();
  const toPosition = (c: CheckpointDoc): Position => ({ commit: BigInt(c.commit), prepare: BigInt(c.prepare) });
  const saveCheckpoint = (name: string, position: Position) =>
    checkpoints.replaceOne(
      { _id: name },
      { commit: position.commit.toString(), prepare: position.prepare.toString() },
      { upsert: true },
    );

  function collection<T extends Doc>(name: string): Collection<T> {
    const coll = docs(name);
    const whereOf = (query: FindQuery): MongoFilter<Stored> => {
      const filter = translateFilter(query.filter);
      return (query.after ? { $and: [filter, afterFilter(query.sort, query.after)] } : filter) as MongoFilter<Stored>;
    };
    const sortOf = (query: FindQuery) =>
      query.sort.map(([path, order]) => [fieldName(path), order === 'desc' ? -1 : 1] as const);
    const keysOf = (query: FindQuery, stored: Stored) =>
      query.sort.map(([path]) => sortKeyValue(stored._id, strip<T>(stored), path));
    /** The seek's first `maxScan` documents in order, and of them those matching `residual` (port.ts, `maxScan`). */
    const walk = async (query: FindQuery, residual: Filter, maxScan: number): Promise<Page<T>> => {
      const [result] = await coll
        .aggregate<{ hits: Stored[]; walked: Array<{ n: number; last: Stored }> }>([
          { $match: whereOf(query) },
          { $sort: Object.fromEntries(sortOf(query)) },
          { $limit: maxScan },
          {
            $facet: {
              hits: [{ $match: translateFilter(residual) }, { $limit: query.limit + 1 }],
              walked: [{ $group: { _id: null, n: { $sum: 1 }, last: { $last: '$$ROOT' } } }],
            },
          },
        ])
        .toArray();
      const hits = result?.hits ?? [];
      const walked = result?.walked[0];
      const items = hits.slice(0, query.limit);
      if (hits.length > query.limit)
        return { items: items.map((h) => strip<T>(h)), next: keysOf(query, items.at(-1)!) };
      const next = walked && walked.n >= maxScan ? keysOf(query, walked.last) : null;
      return { items: items.map((h) => strip<T>(h)), next };
    };
    return {
      async get(id) {
        const stored = await coll.findOne({ _id: id });
        return stored ? strip<T>(stored) : null;
      },
      async getMany(ids) {
        const found = await coll.find({ _id: { $in: [...ids] } }).toArray();
        return new Map(found.map((stored) => [stored._id, strip<T>(stored)]));
      },
      async find(query: FindQuery): Promise<Page<T>> {
        if (!Number.isInteger(query.limit) || query.limit < 1) throw new Error('limit must be a positive integer');
        if (query.sort.length === 0) throw new Error('find needs a sort');
        const index = orderingIndex(declared.get(name) ?? [], query.filter, query.sort);
        if (index && query.maxScan !== undefined) {
          const { seek, residual } = splitByIndex(query.filter, index, query.sort);
          if (residual) return walk({ ...query, filter: seek }, residual, query.maxScan);
        }
        const found = await coll.find(whereOf(query), { sort: sortOf(query), limit: query.limit + 1 }).toArray();
        const page = found.slice(0, query.limit);
        const lastStored = page.at(-1);
        const next = found.length > query.limit && lastStored ? keysOf(query, lastStored) : null;
        return { items: page.map((stored) => strip<T>(stored)), next };
      },
      async explain(query: FindQuery): Promise<string[]> {
        const filter = translateFilter(query.filter);
        const where = query.after ? { $and: [filter, afterFilter(query.sort, query.after)] } : filter;
        const sort = query.sort.map(([path, order]) => [fieldName(path), order === 'desc' ? -1 : 1] as const);
        const plan = (await coll
          .find(where as MongoFilter<Stored>, { sort, limit: query.limit + 1 })
          .explain('queryPlanner')) as Document;
        const winning = plan.queryPlanner?.winningPlan as Document | undefined;
        // Under the slot-based engine the stages are under `queryPlan`.
        return planStages((winning?.queryPlan as Document | undefined) ?? winning);
      },
      async count(filter) {
        return coll.countDocuments(translateFilter(filter) as MongoFilter<Stored>);
      },
      async *scan() {
        for await (const stored of coll.find({}).sort({ _id: 1 })) {
          yield [stored._id, strip<T>(stored)] as [string, T];
        }
      },
    };
  }

  async function commitPart({
    writes,
    checkpoint: checkpointName,
    position,
    expected,
    setAside: skipped,
  }: CheckpointedWrites) {
    // Not atomic with the writes below (those are guarded by position); it stops a projector
    // from writing over a collection that a rebuild has just swapped in.
    if (expected !== undefined) {
      const stored = await checkpoints.findOne({ _id: checkpointName });
      if (!samePosition(stored ? toPosition(stored) : null, expected)) throw new CheckpointMoved(checkpointName);
    }
    const byCollection = new Map<string, AnyBulkWriteOperation<Stored>[]>();
    for (const w of writes) {
      assertCollectionName(w.collection);
      const pos = { commit: pad(w.position.commit), prepare: pad(w.position.prepare) };
      const filter = { _id: w.id, ...olderThan(pos) } as MongoFilter<Stored>;
      let op: AnyBulkWriteOperation<Stored>;
      if (w.doc === null) {
        // No tombstone: a replay from before the delete may briefly bring the document back,
        // until the replay reaches the delete again. The checkpoint moves only after that.
        op = { deleteOne: { filter } };
      } else {
        if ('_id' in w.doc || '_pos' in w.doc) throw new Error(`${w.collection}/${w.id}: _id and _pos are reserved`);
        op = { replaceOne: { filter, replacement: { ...w.doc, _id: w.id, _pos: pos }, upsert: true } };
      }
      const ops = byCollection.get(w.collection) ?? [];
      ops.push(op);
      byCollection.set(w.collection, ops);
    }
    for (const [name, ops] of byCollection) {
      try {
        await docs(name).bulkWrite(ops, { ordered: false });
      } catch (error) {
        if (!onlyStaleWrites(error)) throw error;
      }
    }
    if (skipped?.length) {
      await setAside.bulkWrite(
        skipped.map((e) => {
          const stored = { ...encodeSetAside(e), checkpoint: checkpointName };
          return {
            replaceOne: { filter: { checkpoint: checkpointName, key: stored.key }, replacement: stored, upsert: true },
          };
        }),
      );
    }
    await saveCheckpoint(checkpointName, position);
  }

  /** Document `id`, and only when it matches `when` (an `id` field in `when` names the document too). */
  const only = (id: string, when: Filter | undefined): MongoFilter<Stored> =>
    ({ $and: [{ _id: id }, translateFilter(when)] }) as MongoFilter<Stored>;

  async function checkFence(fence: Fence | undefined): Promise<void> {
    if (fence && !(await docs(fence.collection).findOne(only(fence.id, fence.when), { projection: { _id: 1 } })))
      throw new FenceLost(fence);
  }

  const store: DocumentStore = {
    async update<T extends Doc>(collection: string, id: string, u: Update) {
      checkUpdate(u);
      const coll = docs(collection);
      const change = { ...(u.set ? { $set: u.set } : {}), ...(u.inc ? { $inc: u.inc } : {}) } as Document;
      // One conditional statement; a missing document is inserted apart, so that none of `when`'s
      // equalities seed it (as an upsert would), and a concurrent insert makes it lose.
      const updated = await coll.findOneAndUpdate(only(id, u.when), change, { returnDocument: 'after' });
      if (updated) return strip<T>(updated);
      if (!u.upsert) return null;
      const doc = { ...(u.set ?? {}), ...(u.inc ?? {}) };
      try {
        await coll.insertOne({ ...doc, _id: id });
        return doc as T;
      } catch (error) {
        if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) return null;
        throw error;
      }
    },
    async remove(collection, id, when) {
      return (await docs(collection).deleteOne(only(id, when))).deletedCount === 1;
    },
    async ensureCollection(name, indexes) {
      try {
        await db.createCollection(docs(name).collectionName);
      } catch (error) {
        if (!(error instanceof MongoServerError && error.code === NAMESPACE_EXISTS)) throw error;
      }
      // As SQLite's indexes, each ends with the id: finds choose among them alike (index-choice.ts).
      declared.set(
        name,
        indexes.map((fields) => ({ name: fields.join(','), fields: [...fields, 'id'] })),
      );
      for (const fields of indexes) {
        if (fields.length === 0) throw new Error('an index needs at least one field');
        // createIndex is idempotent for an identical key pattern.
        await docs(name).createIndex(fields.map((f) => [fieldName(f), 1] as [string, 1]));
      }
    },
    collection,
    async commit(writes, checkpointName, position, expected) {
      await commitPart({ writes, checkpoint: checkpointName, position, expected });
    },
    async commitAll(parts, fence) {
      await checkFence(fence);
      for (const part of parts) await commitPart(part);
    },
    async readCheckpoint(name) {
      const found = await checkpoints.findOne({ _id: name });
      return found ? toPosition(found) : null;
    },
    async listCheckpoints() {
      const found = await checkpoints.find({}).sort({ _id: 1 }).toArray();
      return found.map((c) => ({ name: c._id, position: toPosition(c) }));
    },
    async listSetAside(checkpoint, limit) {
      const found = setAside
        .find(checkpoint === undefined ? {} : { checkpoint })
        .sort({ checkpoint: 1, key: 1 })
        .limit(limit ?? 0);
      return (await found.toArray()).map(({ checkpoint, ...stored }) => decodeSetAside(checkpoint, stored));
    },
    async countSetAside() {
      const groups = await setAside.aggregate<{ _id: string; n: number }>([
        { $group: { _id: '$checkpoint', n: { $sum: 1 } } },
      ]);
      return new Map((await groups.toArray()).map((g) => [g._id, g.n]));
    },

    async promote(source, target) {
      assertCollectionName(source);
      assertCollectionName(target);
      if (source === target) throw new Error(`cannot promote ${source} onto itself`);
      if ((await db.listCollections({ name: source }, { nameOnly: true }).toArray()).length === 0) {
        throw new Error(`no collection ${source}`);
      }
      // Not atomic. Until the rename, the target's checkpoint is the older of the two, which is safe
      // for either data set: a replay from there only repeats guarded writes.
      const [from, to] = await Promise.all([
        checkpoints.findOne({ _id: source }),
        checkpoints.findOne({ _id: target }),
      ]);
      const older = from && to ? (comparePositions(toPosition(from), toPosition(to)) < 0 ? from : to) : null;
      if (older) await saveCheckpoint(target, toPosition(older));
      else await checkpoints.deleteOne({ _id: target });
      await db.renameCollection(source, target, { dropTarget: true });
      if (from) await saveCheckpoint(target, toPosition(from));
      await checkpoints.deleteOne({ _id: source });
      await setAside.deleteMany({ checkpoint: target });
      await setAside.updateMany({ checkpoint: source }, { $set: { checkpoint: target } });
    },
    async drop(name) {
      await docs(name).drop();
      await checkpoints.deleteOne({ _id: name });
      await setAside.deleteMany({ checkpoint: name });
    },
    async listCollections() {
      const found = await db.listCollections({}, { nameOnly: true }).toArray();
      return found
        .map((c) => c.name)
        .filter((name) => name !== CHECKPOINTS && name !== SET_ASIDE && COLLECTION_NAME.test(name))
        .sort();
    },
    async close() {
      await client.close();
    },
  };
  return store;
}
