/**
 * Benchmark runs, one document each, with their trials and rollups in tables of their own:
 * - `trials`: one document per trial (its attempts, each attempt's run state, time and cost, its
 *   scores, its judge runs' cost), kept from the run's own events, from its agent runs' and
 *   judges' events, and from the cost ledger's entries for those runs;
 * - `cells`: per (run, task, configuration), the sum of its trials' tallies, so results filtered
 *   by task or tag add up a few rows instead of reading trials;
 * - `agent_runs`: which trial each attempt's agent run belongs to;
 * - `judge_runs`: which trial each judge run (of any scorer attempt on an attempt's run) judges.
 * The run document keeps the tally of each configuration. A trial remembers the last event it
 * applied: its change, and the change it makes to its cell and run, happen once per event.
 *
 * Costs are the cost ledger's (commands/analytics): each `RunInferencePriced` and
 * `RunExecutionPriced` carries the run's priced usage so far (its latest usage report, its ended
 * executions), so a run's cost is the latest of each, the figures of its `request_usage`.
 */
import { projection } from '../../src/projector/projection.js';
import type { BenchmarkRunEvent } from '../../commands/benchmark/events.js';
import type { RunExecutionPriced, RunInferencePriced } from '../../commands/analytics/events.js';
import type { RunEvent } from '../../commands/run/events.js';
import type { ScoringEvent } from '../../commands/scorer/events.js';
import type { AttemptDoc, BenchmarkRunDoc, Tables } from './benchmark-run-docs.js';
import { launched } from './run-launched.js';
import { priced } from './trial-costs.js';
import { endOf, executing, newAttempt, touchAttempt, touchTrial, trialOfRun, unscoreable } from './trial-changes.js';

export const benchmarkRunsProjection = projection<
  BenchmarkRunEvent | RunEvent | ScoringEvent | RunInferencePriced | RunExecutionPriced,
  BenchmarkRunDoc,
  Tables
>({
  name: 'benchmark_runs',
  // 2: costs from the cost ledger (they were the workers' own dollars), with credits.
  version: 2,
  indexes: [
    ['suite_key', 'created_at'],
    ['suite_key', 'state', 'created_at'],
    ['factory_uid', 'created_at'],
    ['factory_uid', 'state', 'created_at'],
  ],
  tables: {
    trials: [
      ['benchmark_run_uid', 'number'],
      ['benchmark_run_uid', 'task_uid', 'number'],
    ],
    cells: [['benchmark_run_uid', 'task_uid']],
    agent_runs: [],
    judge_runs: [],
  },
  on: {
    BenchmarkRunLaunched: launched,
    BenchmarkRunStarted: async (e, docs) => {
      const run = await docs.get(e.data.uid);
      if (run?.state === 'pending')
        docs.patch(run.uid, {
          state: 'running',
          started_at: e.metadata.occurred_at,
          updated_at: e.metadata.occurred_at,
        });
    },
    BenchmarkRunScoring: async (e, docs) => {
      if (await docs.get(e.data.uid)) docs.patch(e.data.uid, { state: 'scoring', updated_at: e.metadata.occurred_at });
    },
    BenchmarkRunFinished: async (e, docs) => {
      if (await docs.get(e.data.uid))
        docs.patch(e.data.uid, {
          state: e.data.state,
          completed_at: e.metadata.occurred_at,
          updated_at: e.metadata.occurred_at,
        });
    },
    BenchmarkRunCancelled: async (e, docs) => {
      const at = e.metadata.occurred_at;
      for (const uid of e.data.cancelled_trials)
        await touchTrial(docs, e, uid, (t) => ({
          ...t,
          state: 'cancelled',
          finished_at: at,
          scores: unscoreable(t, 'the benchmark run was cancelled'),
        }));
      for (const uid of e.data.unjudged_trials)
        await touchTrial(docs, e, uid, (t) => ({ ...t, scores: unscoreable(t, 'the benchmark run was cancelled') }));
      if (await docs.get(e.data.uid))
        docs.patch(e.data.uid, {
          state: 'cancelled',
          cancel_reason: e.data.reason,
          completed_at: at,
          updated_at: at,
        });
    },
    TrialRetried: async (e, docs) => {
      const { trial_uid, attempt_number, run_id, uid } = e.data;
      docs.in('agent_runs').put(run_id, { trial_uid, benchmark_run_uid: uid, attempt_number });
      await touchTrial(docs, e, trial_uid, (t) => ({
        ...t,
        state: 'pending',
        run_id,
        attempts: [...t.attempts, newAttempt(attempt_number, run_id)],
      }));
    },
    TrialAttemptEnded: (e, docs) =>
      touchTrial(docs, e, e.data.trial_uid, (t) => ({
        ...t,
        attempts: t.attempts.map((a) =>
          a.run_id === e.data.run_id && a.finished_at === null
            ? { ...a, ...endOf(a, e.metadata.occurred_at, e.data.run_state) }
            : a,
        ) as AttemptDoc[],
      })),
    TrialSucceeded: (e, docs) =>
      touchTrial(docs, e, e.data.trial_uid, (t) => ({
        ...t,
        state: 'succeeded',
        finished_at: e.metadata.occurred_at,
        scores: t.scores.map((s) => {
          const started = e.data.scoring.find((x) => x.scorer_uid === s.scorer_uid);
          return started
            ? { ...s, status: 'judging', attempt_id: started.attempt_id, judge_run_id: started.judge_run_id }
            : s;
        }),
      })),
    TrialFailed: (e, docs) =>
      touchTrial(docs, e, e.data.trial_uid, (t) => ({
        ...t,
        state: 'failed',
        outcome: 'fail',
        failure_reason: e.data.reason,
        finished_at: e.metadata.occurred_at,
        scores: unscoreable(t, 'the trial failed'),
      })),
    TrialCancelled: (e, docs) =>
      touchTrial(docs, e, e.data.trial_uid, (t) => ({
        ...t,
        state: 'cancelled',
        finished_at: e.metadata.occurred_at,
        scores: unscoreable(t, "the trial's run was cancelled"),
      })),
    TrialScoreRecorded: (e, docs) =>
      touchTrial(docs, e, e.data.trial_uid, (t) => {
        const d = e.data;
        const scores = t.scores.map((s) =>
          s.scorer_uid === d.scorer_uid
            ? {
                ...s,
                status: d.status === 'scored' ? ('scored' as const) : ('finished_unscored' as const),
                classification: d.classification,
                score: d.score,
                passed: d.passed,
                error: d.error,
                scored_at: e.metadata.occurred_at,
              }
            : s,
        );
        const correctness = scores[0];
        const outcome =
          correctness?.status === 'scored' ? (correctness.passed ? ('pass' as const) : ('fail' as const)) : null;
        return { ...t, scores, outcome };
      }),
    // The trials' agent runs: where each attempt is, how long it executed, what it cost.
    RunClaimed: (e, docs) =>
      touchAttempt(docs, e, e.data.run_id, (_a, t) => ({
        attempt: { state: 'CLAIMED' },
        trial: executing(t) && t.run_id === e.data.run_id ? { state: 'running' } : {},
      })),
    RunStarted: (e, docs) =>
      touchAttempt(docs, e, e.data.run_id, (a, t) => ({
        attempt: {
          state: 'INPROGRESS',
          started_at: a.started_at ?? e.metadata.occurred_at,
          execution_started_at: e.metadata.occurred_at,
        },
        trial: executing(t) && t.run_id === e.data.run_id ? { state: 'running' } : {},
      })),
    RunLeaseExpired: (e, docs) =>
      touchAttempt(docs, e, e.data.run_id, (_a, t) => ({
        attempt: { state: 'QUEUED' },
        trial: executing(t) && t.run_id === e.data.run_id ? { state: 'pending' } : {},
      })),
    RunWorkerLost: (e, docs) =>
      touchAttempt(docs, e, e.data.run_id, (a, t) =>
        e.data.requeued
          ? {
              attempt: { state: 'QUEUED' },
              trial: executing(t) && t.run_id === e.data.run_id ? { state: 'pending' } : {},
            }
          : { attempt: endOf(a, e.metadata.occurred_at, 'ERROR') },
      ),
    RunFinished: (e, docs) =>
      touchAttempt(docs, e, e.data.run_id, (a) => ({ attempt: endOf(a, e.metadata.occurred_at, e.data.state) })),
    RunCancelled: (e, docs) =>
      touchAttempt(docs, e, e.data.run_id, (a) => ({ attempt: endOf(a, e.metadata.occurred_at, 'CANCELLED') })),
    // A judge of one of the trial's runs: what it costs is the trial's scoring cost.
    ScoringAttemptStarted: async (e, docs) => {
      const link = await trialOfRun(docs, e.data.run_id);
      if (link)
        docs
          .in('judge_runs')
          .put(e.data.judge_run_id, { trial_uid: link.trial_uid, benchmark_run_uid: link.benchmark_run_uid });
    },
    // What the trials' runs and their judges cost, as the cost ledger priced them.
    RunInferencePriced: priced,
    RunExecutionPriced: priced,
  },
});
