/**
 * Figures made from buckets equal figures worked out from the pull requests, runs and ledger
 * entries themselves (test/helpers/analytics-oracle.ts), over a seeded year of one factory (the
 * bench's analytics history, bench/lib/analytics-history.ts, at a small size) and seeded random
 * ranges and periods, most of them not aligned to days or months.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../../commands/analytics/events.js';
import { type RecordedEvent, START } from '../../../src/eventstore/port.js';
import { factoryRollupsProjection, type RollupDoc } from '../../../projections/analytics/factory-rollups.js';
import { type PullRequestDoc, pullRequestsProjection } from '../../../projections/analytics/pull-requests.js';
import { resolveRange } from '../../../queries/analytics/analytics-range.js';
import { type AnalyticsInfo, generateAnalyticsHistory } from '../../../bench/lib/analytics-history.js';
import { BENCH_ADMIN_KEY } from '../../../bench/lib/history.js';
import { createEventsDb, insertRows } from '../../../bench/lib/seed.js';
import {
  expectFigures,
  metricsOracle,
  perPrOracle,
  type Span,
  spendOracle,
  topOracle,
} from '../../helpers/analytics-oracle.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { settle } from '../../helpers/analytics-fixtures.js';

const RUNS = 2000;
const HOUR = 3_600_000;

let t: TestApp;
const info: Partial<AnalyticsInfo> = {};
let prs: PullRequestDoc[];
let runs: RollupDoc[];
let ledger: RecordedEvent<LedgerEvent>[];

async function all<T>(rows: AsyncIterable<[string, T]>): Promise<T[]> {
  const out: T[] = [];
  for await (const [, doc] of rows) out.push(doc);
  return out;
}

async function readLedger(): Promise<RecordedEvent<LedgerEvent>[]> {
  const out: RecordedEvent<LedgerEvent>[] = [];
  for (let after = START; ; ) {
    const page = await t.rt.events.readAll(after, 5000, ['RunInferencePriced', 'RunExecutionPriced']);
    if (!page.length) return out;
    out.push(...(page as RecordedEvent<LedgerEvent>[]));
    after = page.at(-1)!.position;
  }
}

// The log is written into the SQLite event store before the app starts (on a production event store, CI's other workflow, it is not).
describe.skipIf(process.env.EVENTSTORE_URL)('figures from buckets', () => {
  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-buckets-'));
    await createEventsDb(path.join(dir, 'events.db'));
    insertRows(path.join(dir, 'events.db'), generateAnalyticsHistory(RUNS, info));
    t = await startTestApp({ DATA_DIR: dir });
    await settle(t);
    prs = (await all(t.rt.readModel(pullRequestsProjection).scan())).filter((pr) => pr.listed);
    runs = (await all(t.rt.readModel(factoryRollupsProjection).scan())).filter((r) => r.grain === 'run');
    ledger = await readLedger();
  }, 120_000);
  afterAll(() => t?.close());

  const get = async (url: string) => {
    const res = await t.call('GET', `/factory/${info.factoryUid}${url}`, undefined, BENCH_ADMIN_KEY);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  /** A seeded range within the history's year: any hour, an hour to 400 days long, with or without periods. */
  const ranges = fc.record({
    startHour: fc.integer({ min: 0, max: 365 * 24 }),
    hours: fc.oneof(fc.integer({ min: 1, max: 72 }), fc.integer({ min: 24, max: 400 * 24 })),
    by: fc.constantFrom(undefined, 'day', 'week', 'month'),
  });
  const queryOf = (r: { startHour: number; hours: number; by: string | undefined }) => {
    const from = Date.parse('2025-01-01T00:00:00Z') + r.startHour * HOUR;
    const by = r.by === 'day' && r.hours > 365 * 24 ? 'week' : r.by;
    const q = {
      start_date: new Date(from).toISOString(),
      end_date: new Date(from + r.hours * HOUR).toISOString(),
      ...(by ? { group_by_period: by as 'day' | 'week' | 'month' } : {}),
    };
    const range = resolveRange(q, new Date());
    const spans: Span[] = range.periods ?? [];
    return { qs: new URLSearchParams(q).toString(), whole: { from: range.from, to: range.to }, spans };
  };

  const repoMerged = (s: Span) =>
    prs.filter(
      (pr) =>
        pr.repo_key === 'acme/app' &&
        pr.merged_at &&
        Date.parse(pr.merged_at) >= s.from &&
        Date.parse(pr.merged_at) < s.to,
    ).length;

  it('has enough of everything to test: bucketed medians, months with more PRs than a row keeps', () => {
    expect(prs.length).toBeGreaterThan(400);
    expect(prs.filter((pr) => pr.merged_at).length).toBeGreaterThan(100);
    const perMonth = new Map<string, number>();
    for (const pr of prs)
      perMonth.set(pr.first_seen_at!.slice(0, 7), (perMonth.get(pr.first_seen_at!.slice(0, 7)) ?? 0) + 1);
    expect(Math.max(...perMonth.values())).toBeGreaterThan(50);
  });

  it('/metrics: every figure, of the range and of each period', async () => {
    await fc.assert(
      fc.asyncProperty(ranges, async (r) => {
        const { qs, whole, spans } = queryOf(r);
        const body = await get(`/metrics?${qs}`);
        expectFigures(body, metricsOracle(prs, runs, whole, repoMerged(whole)));
        spans.forEach((s, i) => {
          const expected = metricsOracle(prs, runs, s, repoMerged(s));
          for (const [k, v] of Object.entries(expected)) expectFigures(body.series[k][i], v, `series.${k}[${i}]`);
        });
      }),
      { seed: 3401, numRuns: 25 },
    );
  });

  it('/costs/per-pr and by-size: counts, dollars, means and medians', async () => {
    await fc.assert(
      fc.asyncProperty(ranges, async (r) => {
        const { qs, whole, spans } = queryOf(r);
        const body = await get(`/costs/per-pr?${qs}`);
        expectFigures(body, perPrOracle(prs, whole));
        spans.forEach((s, i) => {
          const p = perPrOracle(prs, s);
          const { pr_count, dollars, median } = body.series;
          const expected = { pr_count: p.pr_count, dollars: p.dollars, median: p.median };
          expectFigures({ pr_count: pr_count[i], dollars: dollars[i], median: median[i] }, expected, `series[${i}]`);
        });
        const sizes = await get(`/costs/per-pr/by-size?${qs}`);
        for (const b of sizes.buckets)
          expectFigures(
            b,
            {
              ...perPrOracle(
                prs.filter((pr) => pr.size === b.size),
                whole,
              ),
              dollars: undefined,
            },
            `buckets.${b.size}`,
          );
      }),
      { seed: 3402, numRuns: 25 },
    );
  });

  it('/costs/per-pr/top: the costliest first seen in the range, in order', async () => {
    await fc.assert(
      fc.asyncProperty(ranges, fc.integer({ min: 1, max: 50 }), async (r, limit) => {
        const { qs, whole } = queryOf({ ...r, by: undefined });
        const body = await get(`/costs/per-pr/top?${qs}&limit=${limit}`);
        expect(body.data.map((pr: { url: string }) => pr.url)).toEqual(topOracle(prs, whole, limit));
      }),
      { seed: 3403, numRuns: 25 },
    );
  });

  it('/costs/breakdown: each group’s spend equals the ledger entries of the range', async () => {
    await fc.assert(
      fc.asyncProperty(ranges, fc.constantFrom('user' as const, 'model' as const), async (r, group) => {
        const { qs, whole } = queryOf({ ...r, by: undefined });
        const body = await get(`/costs/breakdown?group_by=${group}&${qs}`);
        const expected = spendOracle(ledger, whole, group);
        const actual = new Map(
          body.groups.map((g: { key: string; dollars: { total: number } }) => [g.key, g.dollars.total]),
        );
        expectFigures(Object.fromEntries(actual), Object.fromEntries(expected));
        expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
      }),
      { seed: 3404, numRuns: 25 },
    );
  });
});
