/**
 * Money and tallies of the benchmark runs read model: amounts by category, what a run cost, and
 * the counts and sums over trials that a trial adds to its cell, its configuration and its run
 * (and the queries and resources read back).
 */
import { own, putOwn } from '../../src/own-keys.js';

/** Amounts by category, with their total: US dollars, or credits. */
export interface Amounts {
  inference: number;
  compute: number;
  platform: number;
  total: number;
}

/** US dollars by category, as `request_usage` reports them. */
export type Dollars = Amounts;
/** Credits by category, as `request_usage` reports them. */
export type Credits = Amounts;

export const NO_COST: Amounts = { inference: 0, compute: 0, platform: 0, total: 0 };

export const amounts = (inference: number, compute: number, platform: number): Amounts => ({
  inference,
  compute,
  platform,
  total: inference + compute + platform,
});

/** What a run cost, as the cost ledger priced it (its `request_usage`): in US dollars and in credits. */
export interface RunCost {
  cost: Dollars;
  credits: Credits;
}

/** Counts and sums over trials: what a trial adds to its cell, its configuration and its run. */
export interface Tally {
  [field: string]: unknown;
  trials: number;
  pending: number;
  running: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  /** Trials the correctness scorer passed; `fail` also counts trials whose every attempt failed. */
  pass: number;
  fail: number;
  /** Succeeded trials the correctness judge could not score. */
  unscored: number;
  judging_trials: number;
  scoring_finished_trials: number;
  retries: number;
  retried_trials: number;
  wall_ms: number;
  /** What the trials' runs cost (every attempt), in US dollars and in credits. */
  cost: Dollars;
  credits: Credits;
  /** What their judge runs cost. */
  scoring_cost: Dollars;
  scoring_credits: Credits;
  /** (trial, scorer) pairs by state. */
  ledger: Record<'awaiting_trial' | 'judging' | 'scored' | 'finished_unscored' | 'not_scoreable', number>;
  /** Each scorer's outcomes over the trials, by scorer uid. */
  scorers: Record<string, { pass: number; fail: number; unscored: number }>;
}

/** What a tally is made from: the trial as the read model keeps it. */
export interface TalliedTrial {
  state: string;
  outcome: 'pass' | 'fail' | null;
  attempts: ReadonlyArray<{ run_time_ms: number } & RunCost>;
  /** Its judge runs (those with a cost so far). */
  judges: ReadonlyArray<RunCost>;
  scores: ReadonlyArray<{ scorer_uid: string; status: keyof Tally['ledger']; passed: boolean | null }>;
}

export function tallyOf(t: TalliedTrial): Tally {
  const ledger = { awaiting_trial: 0, judging: 0, scored: 0, finished_unscored: 0, not_scoreable: 0 };
  const scorers: Tally['scorers'] = {};
  for (const s of t.scores) {
    ledger[s.status]++;
    const row = { pass: 0, fail: 0, unscored: 0 };
    if (s.status === 'scored') row[s.passed ? 'pass' : 'fail'] = 1;
    if (s.status === 'finished_unscored') row.unscored = 1;
    putOwn(scorers, s.scorer_uid, row);
  }
  const judging = t.scores.some((s) => s.status === 'judging');
  const correctness = t.scores[0];
  const is = (state: string) => (t.state === state ? 1 : 0);
  return {
    trials: 1,
    pending: is('pending'),
    running: is('running'),
    succeeded: is('succeeded'),
    failed: is('failed'),
    cancelled: is('cancelled'),
    pass: t.outcome === 'pass' ? 1 : 0,
    fail: t.outcome === 'fail' ? 1 : 0,
    unscored: t.state === 'succeeded' && correctness?.status === 'finished_unscored' ? 1 : 0,
    judging_trials: t.state === 'succeeded' && judging ? 1 : 0,
    scoring_finished_trials: t.state === 'succeeded' && !judging ? 1 : 0,
    retries: Math.max(0, t.attempts.length - 1),
    retried_trials: t.attempts.length > 1 ? 1 : 0,
    wall_ms: t.attempts.reduce((n, a) => n + a.run_time_ms, 0),
    cost: t.attempts.reduce((sum, a) => addTally(sum, a.cost), NO_COST),
    credits: t.attempts.reduce((sum, a) => addTally(sum, a.credits), NO_COST),
    scoring_cost: t.judges.reduce((sum, j) => addTally(sum, j.cost), NO_COST),
    scoring_credits: t.judges.reduce((sum, j) => addTally(sum, j.credits), NO_COST),
    ledger,
    scorers,
  };
}

const EMPTY_TALLY = (): Tally => ({
  trials: 0,
  pending: 0,
  running: 0,
  succeeded: 0,
  failed: 0,
  cancelled: 0,
  pass: 0,
  fail: 0,
  unscored: 0,
  judging_trials: 0,
  scoring_finished_trials: 0,
  retries: 0,
  retried_trials: 0,
  wall_ms: 0,
  cost: NO_COST,
  credits: NO_COST,
  scoring_cost: NO_COST,
  scoring_credits: NO_COST,
  ledger: { awaiting_trial: 0, judging: 0, scored: 0, finished_unscored: 0, not_scoreable: 0 },
  scorers: {},
});

type Numbers = { [key: string]: number | Numbers };

function add(a: Numbers, b: Numbers, sign: number): Numbers {
  const out: Numbers = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const mine = own(out, key);
    if (typeof value === 'number') putOwn(out, key, (typeof mine === 'number' ? mine : 0) + sign * value);
    else putOwn(out, key, add(typeof mine === 'object' ? mine : {}, value, sign));
  }
  return out;
}

/** `a + sign·b`, field by field (nested too); null is the empty tally. */
export function addTally<T extends object>(a: T | null, b: T | null, sign = 1): T {
  const base = (a ?? EMPTY_TALLY()) as unknown as Numbers;
  return (b ? add(base, b as unknown as Numbers, sign) : base) as unknown as T;
}
