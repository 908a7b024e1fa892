/**
 * Sums of the pull-request buckets (projections/analytics/pr-buckets.ts) of a range or period: what
 * the metrics and the per-PR costs answer from, a few rows whatever the pull requests in them.
 */
import type { Usd } from '../../commands/analytics/events.js';
import {
  type PrBucket,
  PR_SIZE_KEYS,
  type PrSize,
  STAGES,
  type Stage,
} from '../../projections/analytics/pr-buckets.js';
import { mergeSketches, type Sketch, sketchCount, sketchMedian } from '../../projections/analytics/sketch.js';
import { addUsd, dollarsOf, noUsd } from './analytics-answers.js';

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

interface CostFigures {
  count: number;
  usd: Usd;
  costs: Sketch;
}

const sumCosts = (parts: readonly CostFigures[]): CostFigures => ({
  count: parts.reduce((s, p) => s + p.count, 0),
  usd: parts.reduce((s, p) => addUsd(s, p.usd), noUsd()),
  costs: mergeSketches(parts.map((p) => p.costs)),
});

/** The first-seen figures of some rows: counts, interactions, dollars and their sketch, by size too. */
export function sumSeen(rows: readonly PrBucket[]) {
  const seen = rows.map((r) => r.seen);
  return {
    ...sumCosts(seen),
    merged: seen.reduce((s, r) => s + r.merged, 0),
    interactions: seen.reduce((s, r) => s + r.interactions, 0),
    sizes: Object.fromEntries(PR_SIZE_KEYS.map((size) => [size, sumCosts(seen.map((r) => r.sizes[size]))])) as Record<
      PrSize,
      CostFigures
    >,
  };
}

/** The mean and median cost of the pull requests of `figures`. */
export function costPerPr({ count: n, usd, costs }: CostFigures) {
  const median = sketchMedian(costs);
  return {
    pr_count: n,
    dollars: dollarsOf(usd),
    mean: n ? dollarsOf({ inference: usd.inference / n, compute: usd.compute / n, platform: usd.platform / n }) : null,
    median: median === null ? null : round6(median),
  };
}

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
