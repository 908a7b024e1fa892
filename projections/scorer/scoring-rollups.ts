/**
 * A scorer's live scores and judge-run cost, rolled up per UTC minute, hour, day, week and month
 * (and in total), so that metrics over any range sum a bounded number of rows. Live scores are
 * counted by score, not by outcome: pass and fail are derived when read, against the threshold of
 * that moment, so a new threshold re-derives the past without touching a row.
 *
 * A judge run's cost is the cost ledger's: each `RunInferencePriced` and `RunExecutionPriced` of
 * one of the scorer's judge runs (the `judge_runs` table names its scorer) adds its `delta` in the
 * period it happened (the usage report, the end of the execution), as the factory's cost figures
 * count it. Judge runs are counted in the period they first ended.
 *
 * Rows are counters; each remembers the last event it applied, so a replay adds nothing twice.
 */
import { positionKey, type RecordedEvent } from '../../src/eventstore/port.js';
import { type Grain, GRAINS, periodStart } from './periods.js';
import { type Docs, type ProjectionDocs, projection } from '../../src/projector/projection.js';
import type { RunExecutionPriced, RunInferencePriced } from '../../commands/analytics/events.js';
import { type Dollars, NO_DOLLARS, type ScoringEvent } from '../../commands/scorer/events.js';

export type RollupGrain = Grain | 'all';

export interface ScoringRollupDoc {
  [field: string]: unknown;
  scorer_uid: string;
  grain: RollupGrain;
  /** The period's start (ISO 8601); '' for the total. */
  start: string;
  /** Live scores in the period, by score. */
  scores: Array<{ score: number; count: number }>;
  /** Judge runs that (first) ended in the period. */
  judge_runs: number;
  /** What the scorer's judge runs cost in the period: the cost ledger's entries of their usage and executions. */
  cost: Dollars;
  /** The newest live score's time (the total's row only keeps it meaningfully). */
  last_scored_at: string | null;
  /** The last event applied (its log position): a replayed event is skipped. */
  position: string;
}

export const rollupKey = (scorerUid: string, grain: RollupGrain, start: string) => `${scorerUid}|${grain}|${start}`;

const startOf = (at: string, grain: RollupGrain) =>
  grain === 'all' ? '' : periodStart(new Date(at), grain).toISOString();

/** Which scorer a judge run judges for. */
interface JudgeRunDoc {
  [field: string]: unknown;
  scorer_uid: string;
}

type Tables = { judge_runs: JudgeRunDoc };

const add = (a: Dollars, b: { inference: number; compute: number; platform: number }): Dollars => ({
  inference: a.inference + b.inference,
  compute: a.compute + b.compute,
  platform: a.platform + b.platform,
  total: a.total + b.inference + b.compute + b.platform,
});

/** Applies `change` to the row of every grain holding `at`, once per event. */
async function update(
  docs: Docs<ScoringRollupDoc>,
  scorerUid: string,
  at: string,
  position: string,
  change: (row: ScoringRollupDoc, grain: RollupGrain) => Partial<ScoringRollupDoc>,
) {
  for (const grain of [...GRAINS, 'all'] as const) {
    const start = startOf(at, grain);
    const id = rollupKey(scorerUid, grain, start);
    const row = (await docs.get(id)) ?? {
      scorer_uid: scorerUid,
      grain,
      start,
      scores: [],
      judge_runs: 0,
      cost: NO_DOLLARS,
      last_scored_at: null,
      position: '',
    };
    if (row.position >= position) continue;
    docs.put(id, { ...row, ...change(row, grain), position });
  }
}

const counted = (scores: ScoringRollupDoc['scores'], score: number, by: number) => {
  const found = scores.some((s) => s.score === score);
  const next = found
    ? scores.map((s) => (s.score === score ? { score, count: s.count + by } : s))
    : [...scores, { score, count: by }];
  return next.filter((s) => s.count !== 0).sort((a, b) => a.score - b.score);
};

/** A ledger entry of a judge run: what it adds to the judge runs' cost, when it happened. */
async function priced(
  e: RecordedEvent<RunInferencePriced | RunExecutionPriced>,
  docs: ProjectionDocs<ScoringRollupDoc, Tables>,
) {
  const judge = await docs.in('judge_runs').get(e.data.run_id);
  if (!judge) return;
  await update(docs, judge.scorer_uid, e.data.at, `${positionKey(e.position)}:1`, (row) => ({
    cost: add(row.cost, e.data.delta),
  }));
}

export const scoringRollupsProjection = projection<
  ScoringEvent | RunInferencePriced | RunExecutionPriced,
  ScoringRollupDoc,
  Tables
>({
  name: 'scoring_rollups',
  // 2: judge-run cost from the cost ledger (it was the dollars the judges' workers reported).
  version: 2,
  indexes: [['scorer_uid', 'grain', 'start']],
  tables: { judge_runs: [] },
  on: {
    ScoringAttemptStarted: (e, docs) =>
      docs.in('judge_runs').put(e.data.judge_run_id, { scorer_uid: e.data.scorer_uid }),
    ScoringJudgementRecorded: async (e, docs) => {
      const d = e.data;
      if (!d.live) return;
      // Two steps of one event: the rows of the replaced score, then those of the new one.
      const at = positionKey(e.position);
      if (d.replaces) {
        const old = d.replaces;
        await update(docs, d.scorer_uid, old.scored_at, `${at}:0`, (row) => ({
          scores: counted(row.scores, old.score, -1),
        }));
      }
      await update(docs, d.scorer_uid, d.scored_at, `${at}:1`, (row) => ({
        scores: counted(row.scores, d.score, 1),
        last_scored_at: row.last_scored_at && row.last_scored_at > d.scored_at ? row.last_scored_at : d.scored_at,
      }));
    },
    ScoringJudgeRunEnded: (e, docs) =>
      e.data.first
        ? update(docs, e.data.scorer_uid, e.metadata.occurred_at, `${positionKey(e.position)}:1`, (row) => ({
            judge_runs: row.judge_runs + 1,
          }))
        : undefined,
    RunInferencePriced: priced,
    RunExecutionPriced: priced,
  },
});
