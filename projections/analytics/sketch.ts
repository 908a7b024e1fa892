/**
 * A mergeable summary of non-negative values for medians (the pull-request latencies and costs of
 * docs/features/analytics.md): the values themselves while there are at most `EXACT_VALUES` of
 * them, then a log-bucketed histogram (DDSketch's scheme) whose bucket counts add up across hours,
 * days and months. A value x > 0 falls in bucket i = ceil(log_γ x) with γ = (1 + α) / (1 - α),
 * and the bucket stands for 2γ^i / (γ + 1), within α = 1% of every value in it; zeros are
 * counted apart; the counts are kept as one array from the lowest bucket held. So a median read from buckets is within 1% of the exact one (of each middle value,
 * and so of their mean). Values can be taken out again (a pull request whose figures changed).
 */
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
  /** Bucketed: how many values bucket `offset + j` holds, for each j (no zeros at either end). */
  offset: number;
  counts: number[];
}

export const emptySketch = (): Sketch => ({ values: [], zeros: 0, offset: 0, counts: [] });

const bucketOf = (x: number) => Math.ceil(Math.log(x) / LOG_GAMMA);
const bucketValue = (i: number) => (2 * GAMMA ** i) / (GAMMA + 1);

/** `counts` from `offset`, widened to hold bucket `i`. */
function widened(s: Sketch, i: number): Sketch {
  if (s.counts.length === 0) return { ...s, offset: i, counts: [0] };
  if (i < s.offset) return { ...s, offset: i, counts: [...new Array<number>(s.offset - i).fill(0), ...s.counts] };
  const end = s.offset + s.counts.length;
  return i < end
    ? { ...s, counts: [...s.counts] }
    : { ...s, counts: [...s.counts, ...new Array<number>(i - end + 1).fill(0)] };
}

/** Without zero counts at either end (one form for one content). */
function trimmed(s: Sketch): Sketch {
  let from = 0;
  let to = s.counts.length;
  while (from < to && s.counts[from] === 0) from++;
  while (to > from && s.counts[to - 1] === 0) to--;
  if (from === to) return { ...s, offset: 0, counts: [] };
  return from === 0 && to === s.counts.length ? s : { ...s, offset: s.offset + from, counts: s.counts.slice(from, to) };
}

/** A bucketed sketch plus sign × one value. */
function addToBuckets(s: Sketch, x: number, sign: 1 | -1): Sketch {
  if (x <= 0) return { ...s, zeros: s.zeros + sign };
  const i = bucketOf(x);
  const out = widened(s, i);
  out.counts[i - out.offset]! += sign;
  return sign === 1 ? out : trimmed(out);
}

function bucketed(s: Sketch): Sketch {
  if (s.values === null) return s;
  return s.values.reduce((out, x) => addToBuckets(out, x, 1), {
    values: null,
    zeros: 0,
    offset: 0,
    counts: [],
  } as Sketch);
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
  return addToBuckets(sketch, x, sign);
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
    if (values.length <= EXACT_VALUES) return { ...emptySketch(), values: values.sort((a, b) => a - b) };
  }
  // Each part's buckets: its own, or its values' (one array pass, then one sum into the result).
  let zeros = 0;
  let offset = Infinity;
  let end = -Infinity;
  const parts = sketches.map((s) => {
    zeros += s.values === null ? s.zeros : s.values.filter((x) => x <= 0).length;
    const indices = s.values === null ? null : s.values.filter((x) => x > 0).map(bucketOf);
    const lo = indices ? indices[0] : s.counts.length ? s.offset : undefined;
    const hi = indices ? indices.at(-1) : s.offset + s.counts.length - 1;
    if (lo !== undefined && hi !== undefined) {
      offset = Math.min(offset, lo);
      end = Math.max(end, hi + 1);
    }
    return { s, indices };
  });
  if (offset === Infinity) return { values: null, zeros, offset: 0, counts: [] };
  const counts = new Array<number>(end - offset).fill(0);
  for (const { s, indices } of parts) {
    if (indices) for (const i of indices) counts[i - offset]! += 1;
    else for (let j = 0; j < s.counts.length; j++) counts[s.offset - offset + j]! += s.counts[j]!;
  }
  return { values: null, zeros, offset, counts };
}

export const sketchCount = (s: Sketch): number =>
  s.values !== null ? s.values.length : s.counts.reduce((sum, n) => sum + n, s.zeros);

/** The value of rank `rank` (0-based, ascending) of a bucketed sketch. */
function valueAtRank(s: Sketch, rank: number): number {
  if (rank < s.zeros) return 0;
  let seen = s.zeros;
  for (let j = 0; j < s.counts.length; j++) {
    seen += s.counts[j]!;
    if (rank < seen) return bucketValue(s.offset + j);
  }
  return bucketValue(s.offset + s.counts.length - 1);
}

/** The median (the mean of the two middle values for an even count), or null of no value. */
export function sketchMedian(s: Sketch): number | null {
  const n = sketchCount(s);
  if (n === 0) return null;
  const mid = n >> 1;
  if (s.values !== null) return n % 2 ? s.values[mid]! : (s.values[mid - 1]! + s.values[mid]!) / 2;
  return n % 2 ? valueAtRank(s, mid) : (valueAtRank(s, mid - 1) + valueAtRank(s, mid)) / 2;
}
