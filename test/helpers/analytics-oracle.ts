/**
 * The analytics figures of a range worked out the slow way, from every pull-request document, run
 * row and ledger entry, with exact medians: what the answers made from buckets must equal (their
 * medians within the sketch's 1%).
 */
import { expect } from 'vitest';
import type { LedgerEvent } from '../../commands/analytics/events.js';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { cycleTime, STAGES } from '../../projections/analytics/pr-buckets.js';
import type { PullRequestDoc } from '../../projections/analytics/pull-requests.js';
import type { RollupDoc } from '../../projections/analytics/factory-rollups.js';
import { RELATIVE_ERROR } from '../../projections/analytics/sketch.js';
import { exactMedian } from './exact-median.js';

export interface Span {
  from: number;
  to: number;
}

const within = (at: string | null, s: Span) => at !== null && Date.parse(at) >= s.from && Date.parse(at) < s.to;
const round6 = (n: number) => Math.round(n * 1e6) / 1e6;
const dollars = (u: { inference: number; compute: number; platform: number }) => ({
  inference: round6(u.inference),
  compute: round6(u.compute),
  platform: round6(u.platform),
  total: round6(u.inference + u.compute + u.platform),
});
const sumUsd = (prs: readonly PullRequestDoc[]) =>
  prs.reduce(
    (s, pr) => ({
      inference: s.inference + pr.cost.inference,
      compute: s.compute + pr.cost.compute,
      platform: s.platform + pr.cost.platform,
    }),
    { inference: 0, compute: 0, platform: 0 },
  );

/** costs/per-pr of the pull requests first seen in the span. */
export function perPrOracle(prs: readonly PullRequestDoc[], s: Span) {
  const seen = prs.filter((pr) => within(pr.first_seen_at, s));
  const sum = sumUsd(seen);
  const n = seen.length;
  const median = exactMedian(seen.map((pr) => pr.cost.total));
  return {
    pr_count: n,
    dollars: dollars(sum),
    mean: n ? dollars({ inference: sum.inference / n, compute: sum.compute / n, platform: sum.platform / n }) : null,
    median: median === null ? null : round6(median),
  };
}

/** The pull-request figures of /metrics over the span (total_merged: `repoMerged`). */
export function metricsOracle(prs: readonly PullRequestDoc[], runs: readonly RollupDoc[], s: Span, repoMerged: number) {
  const seen = prs.filter((pr) => within(pr.first_seen_at, s));
  const merged = prs.filter((pr) => within(pr.merged_at, s));
  const observed = merged.filter((pr) => pr.history_complete);
  const autonomous = observed.filter((pr) => !pr.human_code_change).length;
  const measured = merged.filter((pr) => pr.additions !== null && pr.deletions !== null);
  const stage = (st: (typeof STAGES)[number]) => {
    const values = merged.map((pr) => cycleTime(pr)[st]).filter((v): v is number => v !== null);
    return { median_seconds: exactMedian(values), measured_pr_count: values.length };
  };
  return {
    run_count: runs.filter((r) => within(r.at, s)).length,
    pr_count: seen.length,
    merged_pr_count: seen.filter((pr) => pr.merged_at !== null).length,
    average_human_interactions_per_pr: seen.length
      ? seen.reduce((sum, pr) => sum + pr.human_interactions.total, 0) / seen.length
      : null,
    autonomy: observed.length ? autonomous / observed.length : null,
    autonomy_funnel: {
      total_merged: repoMerged,
      factory_merged: merged.length,
      factory_merged_observed: observed.length,
      merged_without_human_code_change: autonomous,
    },
    impact: {
      additions: measured.reduce((sum, pr) => sum + pr.additions!, 0),
      deletions: measured.reduce((sum, pr) => sum + pr.deletions!, 0),
      merged_pr_count: merged.length,
      measured_pr_count: measured.length,
    },
    pr_latency: {
      merged_pr_count: merged.length,
      ...Object.fromEntries(STAGES.map((st) => [st, stage(st)])),
    },
  };
}

/** The `limit` costliest first seen in the span, as costs/per-pr/top orders them: their URLs. */
export const topOracle = (prs: readonly PullRequestDoc[], s: Span, limit: number) =>
  prs
    .filter((pr) => within(pr.first_seen_at, s))
    .sort(
      (a, b) =>
        b.cost.total - a.cost.total ||
        (a.first_seen_at ?? '').localeCompare(b.first_seen_at ?? '') ||
        a.pr_id.localeCompare(b.pr_id),
    )
    .slice(0, limit)
    .map((pr) => pr.url);

/** Dollars spent in the span by `group` key, from the ledger's entries themselves. */
export function spendOracle(entries: readonly RecordedEvent<LedgerEvent>[], s: Span, group: 'user' | 'model') {
  const out = new Map<string, number>();
  for (const e of entries as RecordedEvent<
    Extract<LedgerEvent, { type: 'RunInferencePriced' | 'RunExecutionPriced' }>
  >[]) {
    if (!within(e.data.at, s)) continue;
    const d = e.data.delta;
    const key = e.data.keys[group];
    out.set(key, (out.get(key) ?? 0) + d.inference + d.compute + d.platform);
  }
  return new Map([...out].filter(([, usd]) => Math.abs(usd) >= 5e-7).map(([k, usd]) => [k, round6(usd)]));
}

/**
 * `actual` equals `expected`: medians (`median`, `median_seconds`) within the sketch's relative
 * error, dollars to the millionth (sums rounded in another order), everything else exactly.
 */
export function expectFigures(actual: unknown, expected: unknown, path = '$'): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    const median = /median/.test(path);
    const slack = median ? RELATIVE_ERROR * Math.abs(expected) + 2e-6 : Number.isInteger(expected) ? 0 : 2e-6;
    if (Math.abs(actual - expected) > slack) expect.fail(`${path}: ${actual}, expected ${expected}`);
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    for (const [k, v] of Object.entries(expected))
      expectFigures((actual as Record<string, unknown>)?.[k], v, `${path}.${k}`);
    return;
  }
  expect(actual, path).toEqual(expected);
}
