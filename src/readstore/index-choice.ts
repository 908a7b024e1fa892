/**
 * Which declared index a find reads its page through, and which of its filter's conditions that
 * index serves (the seek) and which it does not (the residual, checked on every document the seek
 * walks). Shared by both adapters, so a bound on the documents walked (`FindQuery.maxScan`) means
 * the same on each.
 */
import type { Condition, Filter, Sort } from './port.js';

export interface DeclaredIndex {
  name: string;
  fields: readonly string[];
}

/** Whether `cond` holds its field to one value. */
const pins = (cond: Condition): boolean =>
  cond === null ||
  typeof cond !== 'object' ||
  ('$eq' in cond && cond.$eq !== undefined) ||
  (Array.isArray(cond.$in) && cond.$in.length === 1);

/** The filter as a list of conjuncts: `{field: condition}` each, or a `$or` of sub-filters. */
function conjuncts(filter: Filter | undefined, into: Filter[] = []): Filter[] {
  for (const [key, value] of Object.entries(filter ?? {})) {
    if (value === undefined) continue;
    if (key === '$and') for (const sub of value as Filter[]) conjuncts(sub, into);
    else into.push({ [key]: value });
  }
  return into;
}

function pinnedFields(filter: Filter | undefined): Set<string> {
  const pinned = new Set<string>();
  for (const c of conjuncts(filter)) {
    const [key, value] = Object.entries(c)[0]!;
    if (key !== '$or' && pins(value as Condition)) pinned.add(key);
  }
  return pinned;
}

/**
 * The index to read a find through: one whose fields are fields the filter pins, then the sort's
 * keys (then the id), so the page is read in order from a seek; the longest such prefix wins, the
 * first declared on a tie. Null when none fits.
 */
export function orderingIndex(
  indexes: readonly DeclaredIndex[],
  filter: Filter | undefined,
  sort: Sort,
): DeclaredIndex | null {
  const pinned = pinnedFields(filter);
  const keys = sort.map(([path]) => path);
  const wanted = keys.at(-1) === 'id' ? keys : [...keys, 'id'];
  let best: { index: DeclaredIndex; prefix: number } | null = null;
  for (const index of indexes) {
    const prefix = index.fields.length - wanted.length;
    if (prefix < 0 || wanted.some((k, i) => index.fields[prefix + i] !== k)) continue;
    if (!index.fields.slice(0, prefix).every((f) => pinned.has(f))) continue;
    if (!best || prefix > best.prefix) best = { index, prefix };
  }
  return best?.index ?? null;
}

/**
 * `filter` cut in two for a read through `index`: the conditions on its pinned fields and on the
 * sort's first key (a range the seek starts and stops at), and the rest. `residual` is null when
 * the index serves every condition.
 */
export function splitByIndex(
  filter: Filter | undefined,
  index: DeclaredIndex,
  sort: Sort,
): { seek: Filter; residual: Filter | null } {
  const sorted = sort.at(-1)?.[0] === 'id' ? sort.length : sort.length + 1;
  const prefix = new Set(index.fields.slice(0, index.fields.length - sorted));
  const served: Filter[] = [];
  const rest: Filter[] = [];
  for (const c of conjuncts(filter)) {
    const [key, value] = Object.entries(c)[0]!;
    const seekable = (prefix.has(key) && pins(value as Condition)) || key === sort[0]?.[0];
    (key !== '$or' && seekable ? served : rest).push(c);
  }
  return { seek: { $and: served }, residual: rest.length ? { $and: rest } : null };
}
