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
import { positionKey, type RecordedEvent } from '../../src/eventstore/port.js';
import { type ProjectionDocs, projection } from '../../src/projector/projection.js';
import type {
  BenchmarkRunEvent,
  BenchmarkRunState,
  RunConfiguration,
  RunScorer,
  RunTask,
} from '../../commands/benchmark/events.js';
import {
  amounts,
  type Credits,
  type Dollars,
  NO_COST,
  type RunCost,
  type Tally,
  tallyOf,
  addTally,
} from './tallies.js';
import type { RunExecutionPriced, RunInferencePriced } from '../../commands/analytics/events.js';
import type { RunEvent } from '../../commands/run/events.js';
import type { ScoringEvent } from '../../commands/scorer/events.js';
import { own, ownsKey, putOwn } from '../../src/own-keys.js';

type ScoreStatus = 'awaiting_trial' | 'judging' | 'scored' | 'finished_unscored' | 'not_scoreable';

export interface TrialScoreDoc {
  scorer_uid: string;
  status: ScoreStatus;
  attempt_id: string | null;
  judge_run_id: string | null;
  classification: string | null;
  score: number | null;
  passed: boolean | null;
  error: string | null;
  scored_at: string | null;
}

export interface AttemptDoc {
  attempt_number: number;
  run_id: string;
  /** The agent run's state (its terminal one once it ended). */
  state: string;
  started_at: string | null;
  finished_at: string | null;
  /** Time the run spent executing (from its worker's start to its end). */
  run_time_ms: number;
  execution_started_at: string | null;
  /** What its run cost so far, as the cost ledger priced it. */
  cost: Dollars;
  credits: Credits;
}

/** A judge run of the trial, once the cost ledger priced some of it. */
interface JudgeCostDoc extends RunCost {
  run_id: string;
}

type TrialState = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface TrialDoc {
  [field: string]: unknown;
  uid: string;
  id: number;
  /** The trial's number (`id`), for ordering: `id` in a sort is the document's key. */
  number: number;
  benchmark_run_uid: string;
  suite_uid: string;
  factory_uid: string;
  team_uid: string;
  task_uid: string;
  task_id: number;
  task_title: string;
  configuration_uid: string;
  configuration_id: number;
  rep_index: number;
  state: TrialState;
  run_id: string;
  attempts: AttemptDoc[];
  failure_reason: string | null;
  outcome: 'pass' | 'fail' | null;
  scores: TrialScoreDoc[];
  /** Its judge runs' costs, in the order first priced. */
  judges: JudgeCostDoc[];
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  /** The last event applied (its log position). */
  position: string;
}

interface CellDoc {
  [field: string]: unknown;
  benchmark_run_uid: string;
  task_uid: string;
  configuration_uid: string;
  tally: Tally;
}

interface AgentRunDoc {
  [field: string]: unknown;
  trial_uid: string;
  benchmark_run_uid: string;
  attempt_number: number;
}

export interface BenchmarkRunDoc {
  [field: string]: unknown;
  uid: string;
  factory_uid: string;
  team_uid: string;
  suite_uid: string;
  suite_key: string;
  suite_name: string;
  suite_version: number;
  agent_uid: string;
  agent_name: string;
  state: BenchmarkRunState;
  repetition_count: number;
  max_attempts: number;
  scorer_selection: string[];
  scorers: RunScorer[];
  configurations: RunConfiguration[];
  tasks: RunTask[];
  trial_count: number;
  creator: { type: 'user' | 'agent' | 'system'; uid: string };
  cancel_reason: string | null;
  /** The tally of each configuration's trials, by configuration uid. */
  by_configuration: Record<string, Tally>;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
}

interface JudgeRunDoc {
  [field: string]: unknown;
  trial_uid: string;
  benchmark_run_uid: string;
}

type Tables = { trials: TrialDoc; cells: CellDoc; agent_runs: AgentRunDoc; judge_runs: JudgeRunDoc };
type Docs = ProjectionDocs<BenchmarkRunDoc, Tables>;

const cellKey = (runUid: string, taskUid: string, configurationUid: string) =>
  `${runUid}|${taskUid}|${configurationUid}`;

/**
 * Changes one trial, once per event: its tally's difference goes to its cell and its run.
 * `change` returns the trial as it is after the event (or null to leave it).
 */
async function touchTrial(docs: Docs, e: RecordedEvent, uid: string, change: (t: TrialDoc) => TrialDoc | null) {
  const trials = docs.in('trials');
  const trial = await trials.get(uid);
  const position = positionKey(e.position);
  if (!trial || trial.position >= position) return;
  const changed = change(trial);
  if (!changed) return;
  const next: TrialDoc = { ...changed, position, updated_at: e.metadata.occurred_at };
  trials.put(uid, next);
  const delta = addTally(tallyOf(next), tallyOf(trial), -1);
  const cells = docs.in('cells');
  const key = cellKey(trial.benchmark_run_uid, trial.task_uid, trial.configuration_uid);
  const cell = await cells.get(key);
  if (cell) cells.put(key, { ...cell, tally: addTally(cell.tally, delta) });
  const run = await docs.get(trial.benchmark_run_uid);
  if (run) {
    const current = own(run.by_configuration, trial.configuration_uid);
    if (current)
      docs.patch(run.uid, {
        by_configuration: { ...run.by_configuration, [trial.configuration_uid]: addTally(current, delta) },
        updated_at: e.metadata.occurred_at,
      });
  }
}

/** The trial of an agent run that is one of its attempts (null for other runs). */
async function trialOfRun(docs: Docs, runId: string) {
  return docs.in('agent_runs').get(runId);
}

/** Changes the attempt of `runId` (when it is one of a trial's), and the trial with it. */
async function touchAttempt(
  docs: Docs,
  e: RecordedEvent,
  runId: string,
  change: (a: AttemptDoc, t: TrialDoc) => { attempt: Partial<AttemptDoc>; trial?: Partial<TrialDoc> },
) {
  const link = await trialOfRun(docs, runId);
  if (!link) return;
  await touchTrial(docs, e, link.trial_uid, (t) => {
    const attempt = t.attempts.find((a) => a.run_id === runId);
    if (!attempt) return null;
    const c = change(attempt, t);
    return {
      ...t,
      ...c.trial,
      attempts: t.attempts.map((a) => (a.run_id === runId ? { ...a, ...c.attempt } : a)),
    };
  });
}

const executing = (t: TrialDoc) => t.state === 'pending' || t.state === 'running';

/** The open execution of an attempt closed at `at`. */
const endOf = (a: AttemptDoc, at: string, state: string): Partial<AttemptDoc> => ({
  state,
  finished_at: at,
  run_time_ms: a.run_time_ms + (a.execution_started_at ? Date.parse(at) - Date.parse(a.execution_started_at) : 0),
  execution_started_at: null,
});

const newAttempt = (attempt_number: number, run_id: string): AttemptDoc => ({
  attempt_number,
  run_id,
  state: 'QUEUED',
  started_at: null,
  finished_at: null,
  run_time_ms: 0,
  execution_started_at: null,
  cost: NO_COST,
  credits: NO_COST,
});

const unscoreable = (t: TrialDoc, error: string | null = null): TrialScoreDoc[] =>
  t.scores.map((s) =>
    s.status === 'awaiting_trial'
      ? { ...s, status: 'not_scoreable', error }
      : s.status === 'judging'
        ? { ...s, status: 'finished_unscored', error }
        : s,
  );

type Priced = RecordedEvent<RunInferencePriced | RunExecutionPriced>;

/**
 * A run's cost after a ledger entry: the entry's usage is the run's so far, so it replaces the
 * part it prices (inference, or machine and platform time) and keeps the other.
 */
function pricedBy(e: Priced, was: RunCost): RunCost {
  if (e.type === 'RunInferencePriced') {
    const u = (e as RecordedEvent<RunInferencePriced>).data.usage;
    return {
      cost: amounts(u.inference_cost_usd, was.cost.compute, was.cost.platform),
      credits: amounts(u.inference_cost, was.credits.compute, was.credits.platform),
    };
  }
  const u = (e as RecordedEvent<RunExecutionPriced>).data.usage;
  return {
    cost: amounts(was.cost.inference, u.compute_cost_usd, u.platform_cost_usd),
    credits: amounts(was.credits.inference, u.compute_cost, u.platform_cost),
  };
}

/** A ledger entry of a trial's attempt run, or of one of its judge runs, changes what it cost. */
async function priced(e: Priced, docs: Docs) {
  const runId = e.data.run_id;
  if (await trialOfRun(docs, runId)) {
    await touchAttempt(docs, e, runId, (a) => ({ attempt: pricedBy(e, a) }));
    return;
  }
  const judge = await docs.in('judge_runs').get(runId);
  if (!judge) return;
  await touchTrial(docs, e, judge.trial_uid, (t) => {
    const was = t.judges.find((j) => j.run_id === runId);
    const now = { run_id: runId, ...pricedBy(e, was ?? { cost: NO_COST, credits: NO_COST }) };
    return { ...t, judges: was ? t.judges.map((j) => (j.run_id === runId ? now : j)) : [...t.judges, now] };
  });
}

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
    BenchmarkRunLaunched: async (e, docs) => {
      const d = e.data;
      if (await docs.get(d.uid)) return;
      const at = e.metadata.occurred_at;
      const tasks = new Map(d.tasks.map((t) => [t.uid, t]));
      const configurations = new Map(d.configurations.map((c) => [c.uid, c]));
      const trials = docs.in('trials');
      const cells = docs.in('cells');
      const by_configuration: Record<string, Tally> = {};
      const cellTallies = new Map<string, Tally>();
      for (const p of d.trials) {
        const trial: TrialDoc = {
          uid: p.uid,
          id: p.id,
          number: p.id,
          benchmark_run_uid: d.uid,
          suite_uid: d.suite_uid,
          factory_uid: d.factory_uid,
          team_uid: d.team_uid,
          task_uid: p.task_uid,
          task_id: tasks.get(p.task_uid)?.id ?? 0,
          task_title: tasks.get(p.task_uid)?.title ?? '',
          configuration_uid: p.configuration_uid,
          configuration_id: configurations.get(p.configuration_uid)?.id ?? 0,
          rep_index: p.rep_index,
          state: 'pending',
          run_id: p.run_id,
          attempts: [newAttempt(1, p.run_id)],
          failure_reason: null,
          outcome: null,
          scores: d.scorers.map((s) => ({
            scorer_uid: s.uid,
            status: 'awaiting_trial',
            attempt_id: null,
            judge_run_id: null,
            classification: null,
            score: null,
            passed: null,
            error: null,
            scored_at: null,
          })),
          judges: [],
          created_at: at,
          updated_at: at,
          finished_at: null,
          position: positionKey(e.position),
        };
        trials.put(p.uid, trial);
        docs.in('agent_runs').put(p.run_id, { trial_uid: p.uid, benchmark_run_uid: d.uid, attempt_number: 1 });
        const tally = tallyOf(trial);
        putOwn(
          by_configuration,
          p.configuration_uid,
          addTally(own(by_configuration, p.configuration_uid) ?? null, tally),
        );
        const key = cellKey(d.uid, p.task_uid, p.configuration_uid);
        cellTallies.set(key, addTally(cellTallies.get(key) ?? null, tally));
      }
      for (const c of d.configurations)
        if (!ownsKey(by_configuration, c.uid)) putOwn(by_configuration, c.uid, addTally<Tally>(null, null));
      for (const p of d.trials) {
        const key = cellKey(d.uid, p.task_uid, p.configuration_uid);
        cells.put(key, {
          benchmark_run_uid: d.uid,
          task_uid: p.task_uid,
          configuration_uid: p.configuration_uid,
          tally: cellTallies.get(key)!,
        });
      }
      docs.put(d.uid, {
        uid: d.uid,
        factory_uid: d.factory_uid,
        team_uid: d.team_uid,
        suite_uid: d.suite_uid,
        suite_key: `${d.factory_uid}:${d.suite_uid}`,
        suite_name: d.suite_name,
        suite_version: d.suite_version,
        agent_uid: d.agent_uid,
        agent_name: d.agent_name,
        state: 'pending',
        repetition_count: d.repetition_count,
        max_attempts: d.max_attempts,
        scorer_selection: d.scorer_selection,
        scorers: d.scorers,
        configurations: d.configurations,
        tasks: d.tasks,
        trial_count: d.trials.length,
        creator: d.creator,
        cancel_reason: null,
        by_configuration,
        created_at: at,
        updated_at: at,
        started_at: null,
        completed_at: null,
      });
    },
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
