/**
 * A benchmark run's trials as the API answers them, from the trial documents of the runs read
 * model: with their scores, metrics, attempts and judge runs when asked for.
 */
import { z } from 'zod';
import { pageInfoSchema } from '../../src/http/schemas.js';
import type { RunScorer } from './events.js';
import type { TrialDoc } from '../../projections/benchmark/benchmark-run-docs.js';
import { tallyOf } from '../../projections/benchmark/tallies.js';
import { seconds } from './run-figures.js';

const dollars = z.object({ inference: z.number(), compute: z.number(), platform: z.number(), total: z.number() });

const attemptResource = z.object({
  attempt_number: z.int(),
  run_id: z.string(),
  state: z.string().describe("The agent run's state (its terminal one once it ended)"),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  run_time_s: z.number(),
  cost_usd: z.number(),
});

const scoreResource = z.object({
  scorer_uid: z.string(),
  scorer_name: z.string(),
  kind: z.string(),
  status: z.enum(['awaiting_trial', 'judging', 'scored', 'finished_unscored', 'not_scoreable']),
  classification: z.string().nullable(),
  score: z.number().nullable(),
  passed: z.boolean().nullable().describe("Against the scorer's threshold when the score was recorded"),
  error: z.string().nullable(),
  scored_at: z.string().nullable(),
});

const trialMetrics = z.object({
  cost_usd: z.number().describe("The trial's runs, every attempt"),
  cost: dollars,
  scoring_cost_usd: z.number().describe("The trial's judge runs"),
  wall_time_s: z.number().describe('Time its runs spent executing, every attempt'),
  retries: z.int(),
});

export const trialResource = z.object({
  uid: z.string(),
  id: z.int(),
  benchmark_run_uid: z.string(),
  configuration_uid: z.string(),
  configuration_id: z.int(),
  task_uid: z.string(),
  suite_task_id: z.int(),
  task_title: z.string(),
  rep_index: z.int(),
  state: z.enum(['pending', 'running', 'succeeded', 'failed', 'cancelled']),
  run_id: z.string().describe("The current attempt's agent run"),
  attempt_count: z.int(),
  outcome: z
    .enum(['pass', 'fail'])
    .nullable()
    .describe('The correctness scorer: pass or fail; fail too when every attempt failed; null while unknown'),
  failure_reason: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  matched_attempt_number: z.int().optional().describe('With agent_run_id: the attempt that run was'),
  scores: z.array(scoreResource).optional(),
  metrics: trialMetrics.optional(),
  attempts: z.array(attemptResource).optional(),
  judge_runs: z
    .array(z.object({ scorer_uid: z.string(), attempt_id: z.string(), judge_run_id: z.string() }))
    .optional(),
});

export const trialsPage = z.object({ data: z.array(trialResource), page_info: pageInfoSchema });

export interface TrialExpansions {
  scores?: boolean;
  metrics?: boolean;
  attempts?: boolean;
  judge_runs?: boolean;
}

function scoresOf(t: TrialDoc, scorers: RunScorer[]) {
  const byUid = new Map(scorers.map((s) => [s.uid, s]));
  return t.scores.map((s) => ({
    scorer_uid: s.scorer_uid,
    scorer_name: byUid.get(s.scorer_uid)?.name ?? '',
    kind: byUid.get(s.scorer_uid)?.kind ?? 'user',
    status: s.status,
    classification: s.classification,
    score: s.score,
    passed: s.passed,
    error: s.error,
    scored_at: s.scored_at,
  }));
}

function metricsOf(t: TrialDoc) {
  const tally = tallyOf(t);
  return {
    cost_usd: tally.cost.total,
    cost: tally.cost,
    scoring_cost_usd: tally.scoring_cost.total,
    wall_time_s: seconds(tally.wall_ms),
    retries: tally.retries,
  };
}

const attemptsOf = (t: TrialDoc) =>
  t.attempts.map((a) => ({
    attempt_number: a.attempt_number,
    run_id: a.run_id,
    state: a.state,
    started_at: a.started_at,
    finished_at: a.finished_at,
    run_time_s: seconds(a.run_time_ms),
    cost_usd: a.cost.total,
  }));

const judgeRunsOf = (t: TrialDoc) =>
  t.scores.flatMap((s) =>
    s.attempt_id && s.judge_run_id
      ? [{ scorer_uid: s.scorer_uid, attempt_id: s.attempt_id, judge_run_id: s.judge_run_id }]
      : [],
  );

export function toTrialResource(
  t: TrialDoc,
  scorers: RunScorer[],
  expand: TrialExpansions = {},
): z.infer<typeof trialResource> {
  return {
    uid: t.uid,
    id: t.id,
    benchmark_run_uid: t.benchmark_run_uid,
    configuration_uid: t.configuration_uid,
    configuration_id: t.configuration_id,
    task_uid: t.task_uid,
    suite_task_id: t.task_id,
    task_title: t.task_title,
    rep_index: t.rep_index,
    state: t.state,
    run_id: t.run_id,
    attempt_count: t.attempts.length,
    outcome: t.outcome,
    failure_reason: t.failure_reason,
    created_at: t.created_at,
    updated_at: t.updated_at,
    finished_at: t.finished_at,
    ...(expand.scores ? { scores: scoresOf(t, scorers) } : {}),
    ...(expand.metrics ? { metrics: metricsOf(t) } : {}),
    ...(expand.attempts ? { attempts: attemptsOf(t) } : {}),
    ...(expand.judge_runs ? { judge_runs: judgeRunsOf(t) } : {}),
  };
}
