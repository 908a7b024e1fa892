/**
 * The median sketch of projections/analytics/sketch.ts: exact while small, within 1% of the exact
 * median once bucketed, whatever the split of the values into parts that are merged, and values
 * taken out again leave what they would have left had they never come.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EXACT_VALUES,
  emptySketch,
  mergeSketches,
  RELATIVE_ERROR,
  type Sketch,
  sketchCount,
  sketchMedian,
  withValue,
} from '../../../projections/analytics/sketch.js';
import { exactMedian as median } from '../../helpers/exact-median.js';

const sketchOf = (values: readonly number[]): Sketch => values.reduce((s, x) => withValue(s, x, 1), emptySketch());

/** Splits `values` into `parts` runs of consecutive values (as hours and days split a year). */
function split<T>(values: readonly T[], cuts: readonly number[]): T[][] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * values.length)))].sort((a, b) => a - b);
  const out: T[][] = [];
  let from = 0;
  for (const to of [...at, values.length]) {
    out.push(values.slice(from, to));
    from = to;
  }
  return out;
}

// Durations in seconds (0 to a year, with zeros: a stage counted as 0) and dollars (a millionth to thousands).
const value = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 1, max: 366 * 86_400 }),
  fc.double({ min: 1e-6, max: 5_000, noNaN: true }),
);

describe('median sketch', () => {
  it('is exact up to EXACT_VALUES values', () => {
    const values = [5, 1, 9, 3];
    expect(sketchMedian(sketchOf(values))).toBe(4);
    expect(sketchMedian(sketchOf([7]))).toBe(7);
    expect(sketchMedian(emptySketch())).toBeNull();
    expect(sketchOf(Array.from({ length: EXACT_VALUES }, (_, i) => i)).values).not.toBeNull();
    expect(sketchOf(Array.from({ length: EXACT_VALUES + 1 }, (_, i) => i)).values).toBeNull();
  });

  it('merged from any split, its median is within 1% of the exact median (seeded)', () => {
    fc.assert(
      fc.property(
        fc.array(value, { minLength: 1, maxLength: 400, size: 'max' }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
        (values, cuts) => {
          const merged = mergeSketches(split(values, cuts).map(sketchOf));
          const exact = median(values)!;
          expect(sketchCount(merged)).toBe(values.length);
          expect(Math.abs(sketchMedian(merged)! - exact)).toBeLessThanOrEqual(RELATIVE_ERROR * exact + 1e-12);
        },
      ),
      { seed: 34, numRuns: 300 },
    );
  });

  it('a value taken out leaves the sketch as if it never came', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 40, maxLength: 200, size: 'max' }), fc.nat(), (values, pick) => {
        const out = values[pick % values.length]!;
        const without = [...values];
        without.splice(pick % values.length, 1);
        const taken = withValue(sketchOf(values), out, -1);
        // Bucketed (more than EXACT_VALUES came) it stays bucketed: the same buckets as the rest's.
        expect(taken).toEqual(mergeSketches([sketchOf(without), { values: null, zeros: 0, offset: 0, counts: [] }]));
      }),
      { seed: 34, numRuns: 200 },
    );
  });
});
