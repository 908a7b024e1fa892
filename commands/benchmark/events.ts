/**
 * Benchmarks: suites of fixed tasks, and runs that try agent configurations on them. Two kinds of
 * streams:
 * - `suite-<factory_uid>:<suite_uid>`: a suite, its launch defaults and its tasks. Every change
 *   (of the suite or of one of its tasks) is a new suite version; task titles are unique within
 *   the suite, which this one stream decides.
 * - `benchmarkrun-<uid>`: one run of a suite: the version and trials frozen at launch, each
 *   trial's attempts (agent runs of source BENCHMARK_TRIAL), the scores its scorers gave, and the
 *   run's state. A cancel and a late score meet in this stream, so none is recorded after a cancel.
 */

/** Where a task starts: a repository and an optional ref. */
interface RepoRef {
  code_forge: string;
  owner: string;
  repo: string;
  ref?: string;
}

/** What a task asks: the fields an identical task repeats, and an edit changes. */
export interface TaskContent {
  title: string;
  prompt: string;
  /** What the built-in correctness scorer grades each trial against. */
  success_criteria: string;
  /** The run the task was made from; null when none (or cleared). */
  source_run_id: string | null;
  starting_repo_refs: RepoRef[];
  tags: string[];
  labels: Record<string, string>;
}

export interface SuiteTask extends TaskContent {
  uid: string;
  /** The suite's sequence number of the task (the hosted service's deprecated numeric `id`). */
  id: number;
}

/** One named agent's model and harness in a configuration. */
interface AgentConfigEntry {
  agent_uid: string;
  agent_name?: string;
  harness: string;
  model: string;
  harness_auth_secret_name?: string | null;
}

/** An agent configuration a run tries: what its trials' runs are configured with. */
export interface Configuration {
  role: 'baseline' | 'candidate';
  display_name: string | null;
  /** Null: the agent's (or the catalogue's) default model. */
  model: string | null;
  /** Null: the agent's default harness. */
  harness: string | null;
  harness_auth_secret_name: string | null;
  runner_id: string | null;
  agent_configs: AgentConfigEntry[];
}

export interface SuiteFields {
  name: string;
  description: string | null;
  /** The factory agent every trial of the suite runs as. */
  agent_uid: string;
  factory_agent_type: string;
  /** Launch defaults: a launch without `configurations` uses these. */
  configurations: Configuration[];
}

type Creator = { type: 'user' | 'agent' | 'system'; uid: string };

export type SuiteEvent =
  | {
      type: 'BenchmarkSuiteCreated';
      data: SuiteFields & { uid: string; factory_uid: string; team_uid: string; version: number; creator: Creator };
    }
  | {
      type: 'BenchmarkSuiteUpdated';
      data: { uid: string; factory_uid: string; version: number; changes: Partial<SuiteFields> };
    }
  /** Soft: the suite is gone from lists and reads; its runs stay readable. */
  | { type: 'BenchmarkSuiteDeleted'; data: { uid: string; factory_uid: string; version: number } }
  | { type: 'BenchmarkTaskAdded'; data: { suite_uid: string; factory_uid: string; version: number; task: SuiteTask } }
  /** The task as it is after the edit, whole. */
  | { type: 'BenchmarkTaskEdited'; data: { suite_uid: string; factory_uid: string; version: number; task: SuiteTask } }
  | {
      type: 'BenchmarkTaskDeleted';
      data: { suite_uid: string; factory_uid: string; version: number; task_uid: string };
    };

export const suiteStream = (factoryUid: string, suiteUid: string) => `suite-${factoryUid}:${suiteUid}`;

// ---- runs ------------------------------------------------------------------------------------

export const BENCHMARK_RUN_STATES = ['pending', 'running', 'scoring', 'completed', 'failed', 'cancelled'] as const;
export type BenchmarkRunState = (typeof BENCHMARK_RUN_STATES)[number];

/** A configuration frozen onto a run, with the run's ids for it. */
export interface RunConfiguration extends Configuration {
  uid: string;
  /** 1-based position in the launch (the hosted service's numeric id). */
  id: number;
}

/** A scorer that judges every trial of a run, as it was at launch. */
export interface RunScorer {
  uid: string;
  name: string;
  kind: 'user' | 'benchmark_task_correctness';
}

/** A task frozen onto a run (its content is the suite's at `suite_version`). */
export interface RunTask {
  uid: string;
  id: number;
  title: string;
  tags: string[];
}

/** One (task, configuration, repetition) and the agent run of its first attempt. */
export interface TrialPlan {
  uid: string;
  /** 1-based, in launch order. */
  id: number;
  task_uid: string;
  configuration_uid: string;
  /** 1-based repetition. */
  rep_index: number;
  run_id: string;
}

/** The judging of a succeeded trial by one scorer: the attempt (and its judge run) started for it. */
export interface TrialScoring {
  scorer_uid: string;
  attempt_id: string;
  judge_run_id: string;
}

export type RunLaunchedData = {
  uid: string;
  factory_uid: string;
  team_uid: string;
  suite_uid: string;
  suite_name: string;
  /** The suite version whose tasks the trials run. */
  suite_version: number;
  agent_uid: string;
  agent_name: string;
  repetition_count: number;
  /** Attempts a trial may use: the first and its retries. */
  max_attempts: number;
  configurations: RunConfiguration[];
  /** The launch's scorer allowlist as given (empty: every applicable scorer). */
  scorer_selection: string[];
  /** The scorers that judge every trial: the built-in correctness scorer first. */
  scorers: RunScorer[];
  tasks: RunTask[];
  trials: TrialPlan[];
  creator: Creator;
};

export type BenchmarkRunEvent =
  | { type: 'BenchmarkRunLaunched'; data: RunLaunchedData }
  /** The trials' first runs were created: the run is under way. */
  | { type: 'BenchmarkRunStarted'; data: { uid: string } }
  /** An attempt's agent run ended (or could not be created: `run_state` NOT_STARTED, with `error`). */
  | {
      type: 'TrialAttemptEnded';
      data: {
        uid: string;
        trial_uid: string;
        attempt_number: number;
        run_id: string;
        run_state: string;
        error: string | null;
      };
    }
  /** A failed attempt is followed by another, with a new agent run. */
  | { type: 'TrialRetried'; data: { uid: string; trial_uid: string; attempt_number: number; run_id: string } }
  /** The trial's run succeeded: its scorers judge it, each with the attempt named here. */
  | { type: 'TrialSucceeded'; data: { uid: string; trial_uid: string; run_id: string; scoring: TrialScoring[] } }
  /** Every attempt failed (or the run could not be started): the trial fails without a judge. */
  | { type: 'TrialFailed'; data: { uid: string; trial_uid: string; reason: string } }
  /** The trial's run was cancelled outside the benchmark: the trial stops there, unscored. */
  | { type: 'TrialCancelled'; data: { uid: string; trial_uid: string } }
  | {
      type: 'TrialScoreRecorded';
      data: {
        uid: string;
        trial_uid: string;
        scorer_uid: string;
        attempt_id: string;
        /** failed: the judge gave no allowed classification (the trial stays unscored by that scorer). */
        status: 'scored' | 'failed';
        classification: string | null;
        score: number | null;
        /** Against the scorer's threshold when the score was recorded. */
        passed: boolean | null;
        error: string | null;
      };
    }
  /** No trial executes any more; judges are still at work. */
  | { type: 'BenchmarkRunScoring'; data: { uid: string } }
  /** Every trial ended and was judged: `completed`, or `failed` when no trial's run succeeded. */
  | { type: 'BenchmarkRunFinished'; data: { uid: string; state: 'completed' | 'failed' } }
  /**
   * Cancelled in flight: the trials still executing are cancelled with it (`cancelled_trials`),
   * and those being judged stay unjudged (`unjudged_trials`): no score is recorded after this.
   */
  | {
      type: 'BenchmarkRunCancelled';
      data: { uid: string; reason: string; cancelled_trials: string[]; unjudged_trials: string[] };
    };

export const benchmarkRunStream = (uid: string) => `benchmarkrun-${uid}`;

/** The metadata keys a trial's agent runs carry (`GET /agent/runs?metadata[benchmark_run_uid]=…` finds them). */
export const TRIAL_METADATA = {
  run: 'benchmark_run_uid',
  trial: 'benchmark_trial_uid',
  suite: 'benchmark_suite_uid',
  configuration: 'benchmark_configuration_uid',
  task: 'benchmark_task_uid',
  attempt: 'benchmark_attempt',
} as const;
