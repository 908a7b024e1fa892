/**
 * The results of a benchmark run as the API answers them: per configuration and per scorer, the
 * comparisons of each candidate with the baseline, progress and costs, summed from the tallies
 * of the trials chosen.
 */
import { z } from 'zod';
import { own } from '../../src/own-keys.js';
import { BENCHMARK_RUN_STATES, type RunConfiguration, type RunScorer } from './events.js';
import { addTally, type Tally } from '../../projections/benchmark/tallies.js';
import { compare, comparisonResource } from './comparison.js';
import {
  configurationNames,
  creditString,
  elapsedOf,
  progress,
  rate,
  scoreProgressOf,
  seconds,
  trialProgressOf,
} from './run-figures.js';
import { trialResource } from './trial-resource.js';

const scorerRate = z.object({
  configuration_uid: z.string(),
  pass_count: z.int(),
  fail_count: z.int(),
  unscored_count: z.int(),
  pass_rate: z.number().nullable(),
});

export const resultsResource = z.object({
  benchmark_run_uid: z.string(),
  run_state: z.enum(BENCHMARK_RUN_STATES),
  provisional: z.boolean().describe('True while the run is pending, running or scoring: every figure may change'),
  summary_status: z.enum(['pending', 'available', 'unavailable']).describe('Always unavailable: no summary is written'),
  incomplete_reason: z.string().nullable(),
  suite_name: z.string(),
  repetition_count: z.int(),
  configurations: z.array(
    z.object({
      uid: z.string(),
      id: z.int(),
      display_name: z.string(),
      role: z.enum(['baseline', 'candidate']),
      model: z.string(),
      harness: z.string(),
      scoring: z.object({
        pass_count: z.int(),
        fail_count: z.int(),
        unscored_count: z.int(),
        pass_rate: z.number().nullable(),
      }),
      metrics: z.object({
        trial_count: z.int(),
        succeeded_count: z.int(),
        failed_count: z.int(),
        cancelled_count: z.int(),
        cost_usd: z.number(),
        avg_cost_usd_per_trial: z.number().nullable(),
        scoring_cost_usd: z.number(),
        wall_time_s: z.number(),
        avg_wall_time_s: z.number().nullable(),
      }),
      retry_count: z.int().describe('Retries across its trials (attempts beyond the first)'),
      retried_trial_count: z.int(),
    }),
  ),
  scorers: z.array(
    z.object({ uid: z.string(), name: z.string(), kind: z.string(), configurations: z.array(scorerRate) }),
  ),
  comparisons: z
    .array(comparisonResource)
    .describe('Each candidate against the baseline: is the difference in pass rate more than chance?'),
  trial_progress: progress.shape.trials,
  score_progress: progress.shape.scores,
  trials_being_judged: z.int(),
  trials_scoring_finished: z.int(),
  run_metrics: z.object({
    cost_usd: z.number(),
    scoring_cost_usd: z.number(),
    total_cost_usd: z.number(),
    total_credits: z.string().nullable().describe('total_cost_usd in credits (a decimal string)'),
    elapsed_s: z.number().nullable(),
  }),
  trials: z.array(trialResource).optional().describe('include=trials: every trial used, with scores and metrics'),
});

export type Results = z.infer<typeof resultsResource>;

type ResultsRun = {
  uid: string;
  state: (typeof BENCHMARK_RUN_STATES)[number];
  suite_name: string;
  repetition_count: number;
  configurations: RunConfiguration[];
  scorers: RunScorer[];
  cancel_reason: string | null;
  started_at: string | null;
  completed_at: string | null;
};

/** Which rows are shown: the configurations and scorers asked for, or every one (null). */
type ShownRows = { configurations: ReadonlySet<string> | null; scorers: ReadonlySet<string> | null };

type TallyOfConfiguration = (uid: string) => Tally;

const incompleteReasonOf = (run: ResultsRun) =>
  run.state === 'cancelled'
    ? `cancelled (${run.cancel_reason ?? 'no reason given'}): the figures hold only the trials that ended and were judged before`
    : run.state === 'failed'
      ? "no trial's run succeeded: there was nothing to judge"
      : null;

const configurationRowOf = (c: RunConfiguration, t: Tally) => ({
  ...configurationNames(c),
  scoring: {
    pass_count: t.pass,
    fail_count: t.fail,
    unscored_count: t.unscored,
    pass_rate: rate(t.pass, t.fail),
  },
  metrics: {
    trial_count: t.trials,
    succeeded_count: t.succeeded,
    failed_count: t.failed,
    cancelled_count: t.cancelled,
    cost_usd: t.cost.total,
    avg_cost_usd_per_trial: t.trials ? t.cost.total / t.trials : null,
    scoring_cost_usd: t.scoring_cost.total,
    wall_time_s: seconds(t.wall_ms),
    avg_wall_time_s: t.trials ? seconds(t.wall_ms / t.trials) : null,
  },
  retry_count: t.retries,
  retried_trial_count: t.retried_trials,
});

function scorerRowsOf(run: ResultsRun, shown: RunConfiguration[], rows: ShownRows, tallyOf: TallyOfConfiguration) {
  return run.scorers
    .filter((s) => !rows.scorers || rows.scorers.has(s.uid))
    .map((s) => ({
      uid: s.uid,
      name: s.name,
      kind: s.kind,
      configurations: shown.map((c) => {
        const r = own(tallyOf(c.uid).scorers, s.uid) ?? { pass: 0, fail: 0, unscored: 0 };
        return {
          configuration_uid: c.uid,
          pass_count: r.pass,
          fail_count: r.fail,
          unscored_count: r.unscored,
          pass_rate: rate(r.pass, r.fail),
        };
      }),
    }));
}

/** Each candidate shown (or every one, when the baseline is shown) against the baseline. */
function comparisonsOf(run: ResultsRun, rows: ShownRows, tallyOf: TallyOfConfiguration) {
  const baseline = run.configurations.find((c) => c.role === 'baseline');
  if (!baseline) return [];
  const candidates = run.configurations.filter((c) => c.role === 'candidate');
  const outcome = (c: RunConfiguration) => ({ uid: c.uid, pass: tallyOf(c.uid).pass, fail: tallyOf(c.uid).fail });
  return candidates
    .filter((c) => !rows.configurations || rows.configurations.has(c.uid) || rows.configurations.has(baseline.uid))
    .map((c) => compare(outcome(baseline), outcome(c), candidates.length));
}

function runFiguresOf(run: ResultsRun, total: Tally, now: string) {
  return {
    trial_progress: trialProgressOf(total),
    score_progress: scoreProgressOf(total),
    trials_being_judged: total.judging_trials,
    trials_scoring_finished: total.scoring_finished_trials,
    run_metrics: {
      cost_usd: total.cost.total,
      scoring_cost_usd: total.scoring_cost.total,
      total_cost_usd: total.cost.total + total.scoring_cost.total,
      total_credits: creditString(total.credits.total + total.scoring_credits.total),
      elapsed_s: elapsedOf(run, now),
    },
  };
}

/** The results of a run from the tallies of the trials chosen (by configuration). */
export function resultsOf(
  run: ResultsRun,
  tallies: ReadonlyMap<string, Tally>,
  now: string,
  rows: ShownRows,
): Omit<Results, 'trials'> {
  const tallyOf = (uid: string) => tallies.get(uid) ?? addTally<Tally>(null, null);
  const total = run.configurations.reduce((sum, c) => addTally(sum, tallyOf(c.uid)), addTally<Tally>(null, null));
  const shown = run.configurations.filter((c) => !rows.configurations || rows.configurations.has(c.uid));
  return {
    benchmark_run_uid: run.uid,
    run_state: run.state,
    provisional: ['pending', 'running', 'scoring'].includes(run.state),
    summary_status: 'unavailable',
    incomplete_reason: incompleteReasonOf(run),
    suite_name: run.suite_name,
    repetition_count: run.repetition_count,
    configurations: shown.map((c) => configurationRowOf(c, tallyOf(c.uid))),
    scorers: scorerRowsOf(run, shown, rows, tallyOf),
    comparisons: comparisonsOf(run, rows, tallyOf),
    ...runFiguresOf(run, total, now),
  };
}
