/**
 * A mergeable summary of non-negative values for medians (the pull-request latencies and costs of
 * docs/features/analytics.md): the values themselves while there are at most `EXACT_VALUES` of
 * them, then a log-bucketed histogram (DDSketch's scheme) whose bucket counts add up across hours,
 * days and months. A value x > 0 falls in bucket i = ceil(log_γ x) with γ = (1 + α) / (1 - α),
 * and the bucket stands for 2γ^i / (γ + 1), within α = 1% of every value in it; zeros are
 * counted apart. So a median read from buckets is within 1% of the exact one (of each middle value,
 * and so of their mean). Values can be taken out again (a pull request whose figures changed).
 */
import { own, putOwn } from '../../src/own-keys.js';

export const RELATIVE_ERROR = 0.01;
/** Up to this many values a sketch keeps them, and its median is exact. */
export const EXACT_VALUES = 32;

const GAMMA = (1 + RELATIVE_ERROR) / (1 - RELATIVE_ERROR);
const LOG_GAMMA = Math.log(GAMMA);

export interface Sketch {
  [field: string]: unknown;
  /** The values, while at most EXACT_VALUES (sorted); null once bucketed. */
  values: number[] | null;
  zeros: number;
  /** Bucket index → how many values it holds. */
  bins: Record<string, number>;
}

export const emptySketch = (): Sketch => ({ values: [], zeros: 0, bins: {} });

const bucketOf = (x: number) => Math.ceil(Math.log(x) / LOG_GAMMA);
const bucketValue = (i: number) => (2 * GAMMA ** i) / (GAMMA + 1);

/** `bins` (with `zeros`) plus sign × one value. */
function addToBins(s: Sketch, x: number, sign: 1 | -1): void {
  if (x <= 0) {
    s.zeros += sign;
    return;
  }
  const key = String(bucketOf(x));
  const n = (own(s.bins, key) ?? 0) + sign;
  if (n <= 0) delete s.bins[key];
  else putOwn(s.bins, key, n);
}

function bucketed(s: Sketch): Sketch {
  if (s.values === null) return s;
  const out: Sketch = { values: null, zeros: 0, bins: {} };
  for (const x of s.values) addToBins(out, x, 1);
  return out;
}

/** The sketch with one value more (sign 1) or less (-1: a value it holds). */
export function withValue(sketch: Sketch, x: number, sign: 1 | -1): Sketch {
  if (sketch.values !== null) {
    const values = [...sketch.values];
    if (sign === 1) {
      values.splice(sortedIndex(values, x), 0, x);
      return values.length > EXACT_VALUES ? bucketed({ ...sketch, values }) : { ...sketch, values };
    }
    const at = values.indexOf(x);
    if (at >= 0) values.splice(at, 1);
    return { ...sketch, values };
  }
  const out: Sketch = { values: null, zeros: sketch.zeros, bins: { ...sketch.bins } };
  addToBins(out, x, sign);
  return out;
}

function sortedIndex(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The sum of sketches: exact while their values together are few enough, else bucketed. */
export function mergeSketches(sketches: readonly Sketch[]): Sketch {
  if (sketches.every((s) => s.values !== null)) {
    const values = sketches.flatMap((s) => s.values!);
    if (values.length <= EXACT_VALUES) return { values: values.sort((a, b) => a - b), zeros: 0, bins: {} };
  }
  const out: Sketch = { values: null, zeros: 0, bins: {} };
  for (const part of sketches.map(bucketed)) {
    out.zeros += part.zeros;
    for (const [k, n] of Object.entries(part.bins)) putOwn(out.bins, k, (own(out.bins, k) ?? 0) + n);
  }
  return out;
}

export const sketchCount = (s: Sketch): number =>
  s.values !== null ? s.values.length : Object.values(s.bins).reduce((sum, n) => sum + n, s.zeros);

/** The value of rank `rank` (0-based, ascending) of a bucketed sketch. */
function valueAtRank(s: Sketch, bins: ReadonlyArray<readonly [number, number]>, rank: number): number {
  if (rank < s.zeros) return 0;
  let seen = s.zeros;
  for (const [i, n] of bins) {
    seen += n;
    if (rank < seen) return bucketValue(i);
  }
  return bucketValue(bins.at(-1)![0]);
}

/** The median (the mean of the two middle values for an even count), or null of no value. */
export function sketchMedian(s: Sketch): number | null {
  const n = sketchCount(s);
  if (n === 0) return null;
  const mid = n >> 1;
  if (s.values !== null) return n % 2 ? s.values[mid]! : (s.values[mid - 1]! + s.values[mid]!) / 2;
  const bins = Object.entries(s.bins)
    .map(([k, c]) => [Number(k), c] as const)
    .sort((a, b) => a[0] - b[0]);
  return n % 2 ? valueAtRank(s, bins, mid) : (valueAtRank(s, bins, mid - 1) + valueAtRank(s, bins, mid)) / 2;
}
