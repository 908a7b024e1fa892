/**
 * Sums of the pull-request buckets (projections/analytics/pr-buckets.ts) of a range or period: what
 * the metrics and the per-PR costs answer from, a few rows whatever the pull requests in them.
 */
import type { Usd } from '../../commands/analytics/events.js';
import { type PrBucket, type PrSize, STAGES, type Stage } from '../../projections/analytics/pr-buckets.js';
import { mergeSketches, type Sketch, sketchCount, sketchMedian } from '../../projections/analytics/sketch.js';
import { addUsd, dollarsOf, noUsd } from './analytics-answers.js';

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

interface CostFigures {
  count: number;
  usd: Usd;
  costs: Sketch;
}

/** The first-seen counts of some rows. */
export function sumSeen(rows: readonly PrBucket[]) {
  return {
    count: rows.reduce((s, r) => s + r.seen.count, 0),
    merged: rows.reduce((s, r) => s + r.seen.merged, 0),
    interactions: rows.reduce((s, r) => s + r.seen.interactions, 0),
  };
}

/** The pull requests of some rows' figures (all first seen, or those of one size): their sum, mean and median cost. */
export function costPerPr(parts: readonly CostFigures[]) {
  const n = parts.reduce((s, p) => s + p.count, 0);
  const usd = parts.reduce((s, p) => addUsd(s, p.usd), noUsd());
  const median = sketchMedian(mergeSketches(parts.map((p) => p.costs)));
  return {
    pr_count: n,
    dollars: dollarsOf(usd),
    mean: n ? dollarsOf({ inference: usd.inference / n, compute: usd.compute / n, platform: usd.platform / n }) : null,
    median: median === null ? null : round6(median),
  };
}

/** The figures of the pull requests of one size in some rows. */
export const ofSize = (rows: readonly PrBucket[], size: PrSize) => rows.map((r) => r.seen.sizes[size]);

/** The merged figures of some rows, with each stage's median (latency sketches merged). */
export function sumMerged(rows: readonly PrBucket[]) {
  const merged = rows.map((r) => r.merged);
  const sum = (f: (m: PrBucket['merged']) => number) => merged.reduce((s, m) => s + f(m), 0);
  const stage = (s: Stage) => {
    const sketch = mergeSketches(merged.map((m) => m.stages[s]));
    return { median_seconds: sketchMedian(sketch), measured_pr_count: sketchCount(sketch) };
  };
  return {
    count: sum((m) => m.count),
    observed: sum((m) => m.observed),
    autonomous: sum((m) => m.autonomous),
    additions: sum((m) => m.additions),
    deletions: sum((m) => m.deletions),
    measured: sum((m) => m.measured),
    repos: [...new Set(merged.flatMap((m) => Object.keys(m.repos)))].sort(),
    stages: Object.fromEntries(STAGES.map((s) => [s, stage(s)])) as Record<Stage, ReturnType<typeof stage>>,
  };
}
