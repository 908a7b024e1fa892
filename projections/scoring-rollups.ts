/**
 * A scorer's live scores and judge-run cost, rolled up per UTC minute, hour, day, week and month
 * (and in total), so that metrics over any range sum a bounded number of rows. Live scores are
 * counted by score, not by outcome: pass and fail are derived when read, against the threshold of
 * that moment, so a new threshold re-derives the past without touching a row.
 *
 * Rows are counters; each remembers the last event it applied, so a replay adds nothing twice.
 */
import { positionKey } from '../src/eventstore/port.js';
import { type Grain, GRAINS, periodStart } from '../src/periods.js';
import { type Docs, projection } from '../src/projector/projection.js';
import { type Dollars, NO_DOLLARS, type ScoringEvent } from '../commands/scorer/events.js';

export type RollupGrain = Grain | 'all';

export interface ScoringRollupDoc {
  [field: string]: unknown;
  scorer_uid: string;
  grain: RollupGrain;
  /** The period's start (ISO 8601); '' for the total. */
  start: string;
  /** Live scores in the period, by score. */
  scores: Array<{ score: number; count: number }>;
  /** Judge runs that ended in the period, and what they cost. */
  judge_runs: number;
  cost: Dollars;
  /** The newest live score's time (the total's row only keeps it meaningfully). */
  last_scored_at: string | null;
  /** The last event applied (its log position): a replayed event is skipped. */
  position: string;
}

export const rollupKey = (scorerUid: string, grain: RollupGrain, start: string) => `${scorerUid}|${grain}|${start}`;

const startOf = (at: string, grain: RollupGrain) =>
  grain === 'all' ? '' : periodStart(new Date(at), grain).toISOString();

const add = (a: Dollars, b: Dollars): Dollars => ({
  inference: a.inference + b.inference,
  compute: a.compute + b.compute,
  platform: a.platform + b.platform,
  total: a.total + b.total,
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

export const scoringRollupsProjection = projection<ScoringEvent, ScoringRollupDoc>({
  name: 'scoring_rollups',
  version: 1,
  indexes: [['scorer_uid', 'grain', 'start']],
  on: {
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
      update(docs, e.data.scorer_uid, e.metadata.occurred_at, `${positionKey(e.position)}:1`, (row) => ({
        judge_runs: row.judge_runs + (e.data.first ? 1 : 0),
        cost: add(row.cost, e.data.cost),
      })),
  },
});
