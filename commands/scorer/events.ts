/**
 * Scorers and their judgements. Three kinds of streams:
 * - `scorer-<uid>`: the scorer (its rubric, classifications, threshold, scope, sampling), versioned;
 * - `scoring-<scorer_uid>:<run_id>`: every attempt of one scorer on one run, so that attempts racing
 *   on the same run (automatic and manual) meet in one stream and leave one live score;
 * - `selfimprovement-<scorer_uid>:<agent_uid>`: the self-improvement runs of one scorer for one
 *   agent, and which failures each reviewed.
 * A judge's reasoning is sealed under the scorer's own key (src/keyring.ts) before it reaches an
 * event; deleting the scorer destroys the key, so the events stay as they are and the text is gone.
 */

type ScopeMode = 'all_agents' | 'selected_agents';

export interface Classification {
  value: string;
  /** 0–1: a run passes when its classification's score is at or above the scorer's threshold. */
  score: number;
  description: string | null;
}

export interface ScopeAgent {
  uid: string;
  /** Whether the judge also sees the conversations of the runs this agent's run started. */
  include_descendants: boolean;
}

/** Overrides for the judge runs (omitted or null: the factory's defaults). */
export interface JudgeConfig {
  default_runner_uid: string | null;
  mcp_servers: Record<string, Record<string, unknown>> | null;
  secrets: Array<{ name: string }> | null;
}

interface SelfImprovementConfig {
  enabled: boolean;
  /** Unreviewed failures of one agent that start a self-improvement run (1–50). */
  failed_run_threshold: number;
}

export interface ScorerFields {
  name: string;
  description: string;
  scoring_prompt: string;
  model_id: string;
  threshold: number;
  allowed_classifications: Classification[];
  scope_mode: ScopeMode;
  /** Empty for all_agents. */
  agents: ScopeAgent[];
  /** Percent of eligible runs judged automatically, two decimals; null: every one; 0: none. */
  sampling_rate: number | null;
  agent_config: JudgeConfig;
  self_improvement: SelfImprovementConfig;
}

/** `benchmark_task_correctness`: the built-in scorer a factory's benchmarks keep (commands/benchmark); absent: `user`. */
export type ScorerKind = 'user' | 'benchmark_task_correctness';

export type ScorerCreatedData = ScorerFields & {
  uid: string;
  factory_uid: string;
  team_uid: string;
  scorer_kind?: ScorerKind;
};

export type ScorerEvent =
  /** `created_at`: automatic judging takes runs that finish from then on (a replay of older ones starts nothing). */
  | { type: 'ScorerCreated'; data: ScorerCreatedData & { version: number; created_at: string } }
  /** The fields given replace those of the scorer (a scope in full); each update is a new version. */
  | { type: 'ScorerUpdated'; data: { uid: string; version: number; changes: Partial<ScorerFields> } }
  /**
   * Permanent. The scorer's key is destroyed with it (its reasons become unreadable); what stays
   * for auditors is this stream: that it existed, its settings, and who deleted it when.
   */
  | { type: 'ScorerDeleted'; data: { uid: string; factory_uid: string; team_uid: string } };

export const scorerStream = (uid: string) => `scorer-${uid}`;

/** The subject of a scorer's key in the keyring. */
export const scorerKey = (uid: string) => `scorer-${uid}`;

// ---- attempts --------------------------------------------------------------------------------

/** `benchmark`: a benchmark trial judged by the scorers its run selected (commands/benchmark). */
export type Trigger = 'automatic' | 'manual' | 'benchmark';

/** The run judged, as it was when the attempt started. */
export interface JudgedRun {
  run_id: string;
  factory_uid: string;
  team_uid: string;
  /** The factory agent that executed it. */
  agent_uid: string;
  conversation_id: string;
  conversation_title: string;
  include_descendants: boolean;
}

/** Money in US dollars, as `request_usage` reports it. */
export interface Dollars {
  inference: number;
  compute: number;
  platform: number;
  total: number;
}

export const NO_DOLLARS: Dollars = { inference: 0, compute: 0, platform: 0, total: 0 };

/** The live score a new one replaced, so read models can take it out of their counts. */
interface ReplacedScore {
  attempt_id: string;
  score: number;
  scored_at: string;
}

export type ScoringEvent =
  | {
      type: 'ScoringAttemptStarted';
      data: JudgedRun & {
        attempt_id: string;
        scorer_uid: string;
        scorer_version: number;
        /** The judge run this attempt starts (a reactor creates it with this id). */
        judge_run_id: string;
        trigger: Trigger;
        attempted_at: string;
        /** What the judge may answer, as the scorer said when the attempt started. */
        classifications: Classification[];
        /** A benchmark trial's success criteria: the judge's rubric gains them (absent otherwise). */
        criteria?: string;
      };
    }
  | {
      type: 'ScoringJudgementRecorded';
      data: {
        attempt_id: string;
        scorer_uid: string;
        run_id: string;
        factory_uid: string;
        agent_uid: string;
        judge_run_id: string;
        classification: string;
        score: number;
        /** The judge's reasoning sealed under the scorer's key; null when it gave none. */
        reason_sealed: string | null;
        scored_at: string;
        /** Whether it is now the pair's live score (the newest attempt that scored). */
        live: boolean;
        replaces: ReplacedScore | null;
      };
    }
  | { type: 'ScoringAttemptFailed'; data: { attempt_id: string; scorer_uid: string; run_id: string; error: string } }
  | {
      type: 'ScoringJudgeRunEnded';
      data: {
        /** The run event that ended the judge run. */
        end_id: string;
        attempt_id: string;
        scorer_uid: string;
        run_id: string;
        judge_run_id: string;
        state: string;
        run_time_ms: number;
        /** The attempt's first end: counts one judge run. */
        first: boolean;
        /**
         * Recorded before the cost ledger (issue #20): the usage the judge's worker reported and the
         * dollars it claimed. Nothing reads them: what a judge run cost is the ledger's
         * (`RunInferencePriced`, `RunExecutionPriced` of the judge run).
         */
        usage?: Record<string, unknown> | null;
        cost?: Dollars;
      };
    };

export const scoringStream = (scorerUid: string, runId: string) => `scoring-${scorerUid}:${runId}`;

// ---- self-improvement ------------------------------------------------------------------------

interface ReviewedFailure {
  run_id: string;
  attempt_id: string;
  classification: string;
  score: number;
  scored_at: string;
}

export type SelfImprovementEvent =
  | {
      type: 'SelfImprovementStarted';
      data: {
        scorer_uid: string;
        agent_uid: string;
        factory_uid: string;
        team_uid: string;
        run_id: string;
        /** The failures the run covers: from now on they are reviewed. */
        failures: ReviewedFailure[];
        /** The judges' reasons for them, sealed under the scorer's key: handed to the worker, never stored open. */
        reasons_sealed: string | null;
        why: 'failed_run_threshold' | 'oldest_failure_age' | 'run_now';
      };
    }
  | {
      type: 'SelfImprovementRunRefused';
      data: { scorer_uid: string; agent_uid: string; run_id: string; error: string };
    };

export const selfImprovementStream = (scorerUid: string, agentUid: string) =>
  `selfimprovement-${scorerUid}:${agentUid}`;
