/** A collection of the MongoDB document store: reads by id, finds (in order, or a bounded walk), counts and scans. */
import type { Document, Collection as MongoCollection, Filter as MongoFilter } from 'mongodb';
import type { Collection, Doc, Filter, FindQuery, Page } from './port.js';
import { type DeclaredIndex, orderingIndex, splitByIndex } from './index-choice.js';
import { afterFilter, fieldName, translateFilter } from './mongo-filter.js';
import { type Stored, strip } from './mongo-layout.js';
import { sortKeyValue } from './sort-key.js';

/** The stages of a winning plan, outermost first: `IXSCAN {"field": 1, ...}`, `COLLSCAN`, `SORT`. */
function planStages(stage: Document | undefined): string[] {
  if (!stage) return [];
  const own = stage.stage === 'IXSCAN' ? `IXSCAN ${JSON.stringify(stage.keyPattern)}` : String(stage.stage);
  const children = [stage.inputStage, ...((stage.inputStages as Document[] | undefined) ?? [])].filter(Boolean);
  return [own, ...children.flatMap((c) => planStages(c as Document))];
}

const whereOf = (query: FindQuery): MongoFilter<Stored> => {
  const filter = translateFilter(query.filter);
  return (query.after ? { $and: [filter, afterFilter(query.sort, query.after)] } : filter) as MongoFilter<Stored>;
};
const sortOf = (query: FindQuery) =>
  query.sort.map(([path, order]) => [fieldName(path), order === 'desc' ? -1 : 1] as const);
const keysOf = (query: FindQuery, stored: Stored) =>
  query.sort.map(([path]) => sortKeyValue(stored._id, strip(stored), path));

/** The seek's first `maxScan` documents in order, and of them those matching `residual` (port.ts, `maxScan`). */
async function walkPage<T extends Doc>(
  coll: MongoCollection<Stored>,
  query: FindQuery,
  residual: Filter,
  maxScan: number,
): Promise<Page<T>> {
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
  if (hits.length > query.limit) return { items: items.map((h) => strip<T>(h)), next: keysOf(query, items.at(-1)!) };
  const next = walked && walked.n >= maxScan ? keysOf(query, walked.last) : null;
  return { items: items.map((h) => strip<T>(h)), next };
}

async function findPage<T extends Doc>(
  coll: MongoCollection<Stored>,
  indexes: readonly DeclaredIndex[],
  query: FindQuery,
): Promise<Page<T>> {
  if (!Number.isInteger(query.limit) || query.limit < 1) throw new Error('limit must be a positive integer');
  if (query.sort.length === 0) throw new Error('find needs a sort');
  const index = orderingIndex(indexes, query.filter, query.sort);
  if (index && query.maxScan !== undefined) {
    const { seek, residual } = splitByIndex(query.filter, index, query.sort);
    if (residual) return walkPage(coll, { ...query, filter: seek }, residual, query.maxScan);
  }
  const found = await coll.find(whereOf(query), { sort: sortOf(query), limit: query.limit + 1 }).toArray();
  const page = found.slice(0, query.limit);
  const lastStored = page.at(-1);
  const next = found.length > query.limit && lastStored ? keysOf(query, lastStored) : null;
  return { items: page.map((stored) => strip<T>(stored)), next };
}

async function explainFind(coll: MongoCollection<Stored>, query: FindQuery): Promise<string[]> {
  const plan = (await coll
    .find(whereOf(query), { sort: sortOf(query), limit: query.limit + 1 })
    .explain('queryPlanner')) as Document;
  const winning = plan.queryPlanner?.winningPlan as Document | undefined;
  // Under the slot-based engine the stages are under `queryPlan`.
  return planStages((winning?.queryPlan as Document | undefined) ?? winning);
}

/** `indexes`: the collection's indexes as declared by `ensureCollection`, for finds to choose among. */
export function mongoCollection<T extends Doc>(
  coll: MongoCollection<Stored>,
  indexes: () => readonly DeclaredIndex[],
): Collection<T> {
  return {
    async get(id) {
      const stored = await coll.findOne({ _id: id });
      return stored ? strip<T>(stored) : null;
    },
    async getMany(ids) {
      const found = await coll.find({ _id: { $in: [...ids] } }).toArray();
      return new Map(found.map((stored) => [stored._id, strip<T>(stored)]));
    },
    find: (query: FindQuery) => findPage<T>(coll, indexes(), query),
    explain: (query: FindQuery) => explainFind(coll, query),
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
