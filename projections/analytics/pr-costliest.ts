/**
 * The costliest pull requests first seen in each unit of time of a factory (./grains.ts; the
 * `costliest` table of the pull-request read model), which costs/per-pr/top takes the first of:
 * an hour's row holds all its pull requests (an hour holds few), a coarser row its first
 * `TOP_KEPT` (the largest `limit`). When one of a full list comes to cost less than the last it
 * held (a tree that produced it produced another, so its share fell), one it left out may now come
 * first: the list is made again from the finer rows' lists, each of which holds its own first.
 */
import type { Docs } from '../../src/projector/projection.js';
import { bucketId, type Grain, grainStart, nextUnit } from './grains.js';

const TOP_KEPT = 50;

export interface TopEntry {
  /** The document's id (`<team_uid>:<pr_id>`). */
  key: string;
  pr_id: string;
  total: number;
  first_seen_at: string;
}

export interface CostliestBucket {
  [field: string]: unknown;
  factory_uid: string;
  grain: Grain;
  at: string;
  /** How many pull requests were first seen in it (the list holds them all when as many). */
  count: number;
  /** Costliest first (ties: first seen first, then by pull request). */
  top: TopEntry[];
}

/** Where a pull request was first seen and what it costs. */
interface Placed {
  factory_uid: string;
  at: string;
  entry: TopEntry;
}

/** Costliest first; ties: first seen first, then by pull request. */
export const byCost = (a: TopEntry, b: TopEntry) =>
  b.total - a.total || a.first_seen_at.localeCompare(b.first_seen_at) || a.pr_id.localeCompare(b.pr_id);

type CostliestDocs = Docs<CostliestBucket>;

const idOf = (grain: Grain, p: Placed) => bucketId(grain, p.factory_uid, grainStart(p.at, grain));

async function rowOf(docs: CostliestDocs, grain: Grain, p: Placed): Promise<CostliestBucket> {
  const at = grainStart(p.at, grain);
  return (await docs.get(idOf(grain, p))) ?? { factory_uid: p.factory_uid, grain, at, count: 0, top: [] };
}

/** `top` (in order) with `entry` in its place. */
function withEntry(top: readonly TopEntry[], entry: TopEntry): TopEntry[] {
  let lo = 0;
  let hi = top.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (byCost(top[mid]!, entry) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return [...top.slice(0, lo), entry, ...top.slice(lo)];
}

/** The grain whose rows make up a row of each grain (a month holds no whole weeks); an hour's row holds all. */
const FINER: Record<Grain, Grain | null> = {
  hour: null,
  six_hours: 'hour',
  day: 'six_hours',
  week: 'day',
  month: 'day',
};

/** A row's list made again from the lists of the finer rows that make it up, each holding its own first. */
async function refilled(docs: CostliestDocs, row: CostliestBucket): Promise<TopEntry[]> {
  const finer = FINER[row.grain];
  const ids: string[] = [];
  const start = Date.parse(row.at);
  const end = nextUnit(start, row.grain);
  if (finer)
    for (let t = start; t < end; t = nextUnit(t, finer))
      ids.push(bucketId(finer, row.factory_uid, new Date(t).toISOString()));
  const children = await Promise.all(ids.map((id) => docs.get(id)));
  return children
    .flatMap((c) => c?.top ?? [])
    .sort(byCost)
    .slice(0, TOP_KEPT);
}

/** Moves a pull request from its place among the costliest of one grain's row (`from`) to its new one (`to`). */
export async function moveCostliest(docs: CostliestDocs, grain: Grain, from: Placed | null, to: Placed | null) {
  let refill: CostliestBucket | null = null;
  if (from) {
    const row = await rowOf(docs, grain, from);
    const top = row.top.filter((e) => e.key !== from.entry.key);
    const left = { ...row, count: row.count - 1, top };
    docs.put(idOf(grain, from), left);
    // It left a list that did not hold every pull request of the row, and may come after one left out.
    const stays = to !== null && idOf(grain, to) === idOf(grain, from) && byCost(to.entry, from.entry) <= 0;
    if (top.length < row.top.length && row.count > row.top.length && !stays) refill = left;
  }
  if (to) {
    const row = await rowOf(docs, grain, to);
    const top = withEntry(row.top, to.entry);
    docs.put(idOf(grain, to), { ...row, count: row.count + 1, top: grain === 'hour' ? top : top.slice(0, TOP_KEPT) });
  }
  if (refill) {
    const row = await docs.get(idOf(grain, from!));
    docs.put(idOf(grain, from!), { ...row!, top: await refilled(docs, refill) });
  }
}
