/**
 * The documents of the benchmark runs read model (projections/benchmark/benchmark-runs.ts): a run,
 * and its tables of trials, cells, and the agent and judge runs that point to a trial.
 */
import type { ProjectionDocs } from '../../src/projector/projection.js';
import type { BenchmarkRunState, RunConfiguration, RunScorer, RunTask } from '../../commands/benchmark/events.js';
import type { Credits, Dollars, RunCost, Tally } from './tallies.js';

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

export type Tables = { trials: TrialDoc; cells: CellDoc; agent_runs: AgentRunDoc; judge_runs: JudgeRunDoc };
export type Docs = ProjectionDocs<BenchmarkRunDoc, Tables>;
