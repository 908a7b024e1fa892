/**
 * The pull-request buckets (projections/analytics/pr-buckets.ts) on hand-made histories: a month
 * (and then six hours) with more pull requests than its rows keep among the costliest, one of which
 * then costs less; and the same buckets when every event is applied twice.
 */
import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../../commands/analytics/events.js';
import { pullRequestRef } from '../../../commands/analytics/github.js';
import type { PrBucket } from '../../../projections/analytics/pr-buckets.js';
import type { CostliestBucket } from '../../../projections/analytics/pr-costliest.js';
import { pullRequestsProjection } from '../../../projections/analytics/pull-requests.js';
import { project, recorded } from '../../helpers/projection-spec.js';

const MONTH = 'month:f-1:2026-03-01T00:00:00.000Z';
const prId = (n: number) => pullRequestRef(`https://github.com/acme/app/pull/${n}`)!.pr_id;

/** Run `run` of tree `root` names pull request `n` at `at`; the tree's shares are `shares` (pull request → dollars). */
const linked = (n: number, at: string, root: string, shares: Array<[number, number]>): LedgerEvent => ({
  type: 'PullRequestLinked',
  data: {
    root_run_id: root,
    pr_id: prId(n),
    url: `https://github.com/acme/app/pull/${n}`,
    provider: 'github',
    repo_full_name: 'acme/app',
    pr_number: n,
    branch: `b-${n}`,
    factory_uid: 'f-1',
    team_uid: 't-1',
    at,
    cause: { event_id: `link-${n}`, revision: 4 },
    run: {
      run_id: `run-${n}`,
      root_run_id: root,
      created_at: at,
      creator: { type: 'user', uid: 'u-1' },
      source: 'API',
      requested_model_id: 'big',
    },
    follow_ups: 0,
    tree_total: { inference: 0, compute: 0, platform: 0 },
    pr_shares: shares.map(([pr, usd]) => ({
      pr_id: prId(pr),
      usd: { inference: usd, compute: 0, platform: 0 },
      inference_by_model: { big: usd },
    })),
  },
});

/** Two a day over March 2026. */
const twoADay = (n: number) => new Date(Date.UTC(2026, 2, 1 + Math.floor((n - 1) / 2), n % 24)).toISOString();

/** 60 pull requests, the n-th costing n dollars, seen at `when(n)`; then the costliest's tree names another, to a cent each. */
function history(when = twoADay) {
  const events: LedgerEvent[] = [];
  for (let n = 1; n <= 60; n++) events.push(linked(n, when(n), `tree-${n}`, [[n, n]]));
  // Tree 60 names pull request 61 on 30 March: pull request 60 now costs $0.01, 61 as much.
  events.push(
    linked(61, '2026-03-30T12:00:00.000Z', 'tree-60', [
      [60, 0.01],
      [61, 0.01],
    ]),
  );
  return recorded(events);
}

describe('pull-request buckets', () => {
  it('keep a month’s costliest right when one of them costs less than one the row had left out', async () => {
    const docs = await project(pullRequestsProjection, history());
    const month = docs[`buckets/${MONTH}`] as PrBucket;
    const costliest = docs[`costliest/${MONTH}`] as CostliestBucket;
    // Costs now: 1..59, 0.01 (60) and 0.01 (61): the costliest 50 are 59 down to 10.
    expect(costliest.top.map((e) => e.total)).toEqual(Array.from({ length: 50 }, (_, i) => 59 - i));
    expect([costliest.count, month.seen.count]).toEqual([61, 61]);
    expect(month.seen.usd.inference).toBeCloseTo((59 * 60) / 2 + 0.02, 9);
  });

  it('keep the costliest right at every grain when 60 were seen within six hours', async () => {
    const docs = await project(
      pullRequestsProjection,
      history((n) => new Date(Date.UTC(2026, 2, 4, n % 6, n)).toISOString()),
    );
    // Pull request 61 is seen on 30 March: in the month's row only.
    for (const [id, count] of [
      ['six_hours:f-1:2026-03-04T00:00:00.000Z', 60],
      ['day:f-1:2026-03-04T00:00:00.000Z', 60],
      ['week:f-1:2026-03-01T00:00:00.000Z', 60],
      [MONTH, 61],
    ] as const) {
      const costliest = docs[`costliest/${id}`] as CostliestBucket;
      expect([id, costliest.count, costliest.top.map((e) => e.total)]).toEqual([
        id,
        count,
        Array.from({ length: 50 }, (_, i) => 59 - i),
      ]);
    }
  });

  it('are the same when every event is applied twice', async () => {
    const once = await project(pullRequestsProjection, history());
    expect(await project(pullRequestsProjection, history(), { times: 2 })).toEqual(once);
    expect(await project(pullRequestsProjection, history(), { batchSize: 7 })).toEqual(once);
  });
});
