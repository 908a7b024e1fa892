/**
 * The facts analytics is built from, beside the runs' own events:
 *
 * - `costs-<root_run_id>`: the cost ledger of one run tree. Each usage report and each ended
 *   execution of a run is priced once, at the price list in force when it happened, and recorded
 *   here with the amounts, the prices used, the delta it adds, the keys it counts under and each
 *   of the tree's pull requests' new share of the tree's cost. So every dollar a read model shows
 *   is a sum of recorded amounts: a rebuild gives the same dollars whatever the price list is now.
 * - `pullrequest-<team_uid>:<pr_id>`: what one team's GitHub webhooks said about one pull request.
 *
 * A `pr_id` names a pull request on its code host (a hash of its URL), the same in every team: a
 * URL is anyone's to report, so whatever is kept of a pull request is the team's own, keyed by
 * `pullRequestKey` (its facts stream, its read-model document).
 */

/** US dollars by cost category. */
export interface Usd {
  inference: number;
  compute: number;
  platform: number;
}

/** The groups a cost counts under (`costs/breakdown?group_by=`): UNKNOWN when there is none. */
export interface CostKeys {
  /** The source of the tree's root run. */
  source: string;
  /** Who created the tree's root run. */
  user: string;
  /** The agent identity of the run the cost belongs to. */
  agent: string;
  /** The model that run was configured to use. */
  model: string;
}

/** A pull request's share of its tree's cost after the event: the tree's cost split evenly. */
export interface PrShare {
  pr_id: string;
  usd: Usd;
  /** Its share of the tree's inference dollars, by the model that served them. */
  inference_by_model: Record<string, number>;
}

/** Where and when a ledger entry counts. */
export interface LedgerEntry {
  /** The tree whose ledger this is. */
  root_run_id: string;
  /** The run the usage or execution is of. */
  run_id: string;
  /** The factory whose figures it counts in (the tree root's); null outside factories. */
  factory_uid: string | null;
  team_uid: string | null;
  /** When it happened: the time of the run event priced (the usage report, the end of the execution). */
  at: string;
  /** The run event priced: `run-<run_id>` at this revision. */
  cause: { event_id: string; revision: number };
  /** The version of the price list used: the revision of the `models` stream. */
  price_list_revision: number;
  credit_price_usd: number;
  keys: CostKeys;
  /** What this entry adds to the figures of its factory (USD). */
  delta: Usd;
  /** The tree's cost so far, and the new share of each of its pull requests. */
  tree_total: Usd;
  pr_shares: PrShare[];
}

/** Token counts of one model by category. */
export interface Tokens {
  input: number;
  cache_read: number;
  cache_write: number;
  output: number;
  /** Tokens the report gave without a priced category: counted, not priced. */
  other: number;
}

export type UsageType = 'warp' | 'byok' | 'custom_endpoint';

/** One model's tokens of a usage report, priced. */
export interface PricedModel {
  model_id: string;
  usage_type: UsageType;
  tokens: Tokens;
  /** US dollars per million tokens used; null when not priced (bring-your-own-key, custom endpoints, or a model the catalogue lacks). */
  prices: { input: number; cache_read: number; cache_write: number; output: number } | null;
  usd: { input: number; cache_read: number; cache_write: number; output: number };
}

/** The part of a run's `request_usage` its latest usage report makes (cumulative for the run). */
export interface InferenceUsage {
  inference_cost: number;
  inference_cost_usd: number;
  total_tokens: number;
  inference_cost_breakdown_usd: {
    input_cost_usd: number;
    input_cache_read_cost_usd: number;
    input_cache_write_cost_usd: number;
    output_cost_usd: number;
  };
  model_token_usage: Array<{
    model_id: string;
    usage_type: UsageType;
    total_tokens: number;
    tokens_by_category: Record<string, number>;
  }>;
  usage_by_category?: Record<string, unknown>;
}

/** The part of a run's `request_usage` its ended executions make (cumulative for the run). */
export interface MachineUsage {
  compute_cost: number;
  compute_cost_usd: number;
  platform_cost: number;
  platform_cost_usd: number;
  compute_seconds: number;
  platform_seconds: number;
}

/** A usage report of a run, priced. Its inference counts for the earliest run of its conversation. */
export type RunInferencePriced = {
  type: 'RunInferencePriced';
  data: LedgerEntry & {
    /** The run the inference is attributed to: the earliest of the conversation (often the run itself). */
    attributed_run_id: string;
    models: PricedModel[];
    /** The run's inference now (this report replaces the one before). */
    usage: InferenceUsage;
    inference_usd_by_model: Record<string, number>;
  };
};

/** An execution of a run ended (finished, cancelled or lost with its worker), priced. */
export type RunExecutionPriced = {
  type: 'RunExecutionPriced';
  data: LedgerEntry & {
    execution_id: string;
    runner_id: string | null;
    claimed_at: string | null;
    started_at: string | null;
    ended_at: string;
    compute_seconds: number;
    platform_seconds: number;
    compute_usd_per_hour: number;
    platform_usd_per_hour: number;
    /** The run's executions so far. */
    usage: MachineUsage;
  };
};

/** The run (part of the factory) whose PR this is, as the PR record lists it. */
export interface LinkedRun {
  run_id: string;
  root_run_id: string;
  created_at: string;
  creator: { type: string; uid: string };
  source: string;
  requested_model_id: string | null;
}

/** A run of the tree reported a PULL_REQUEST artifact naming the pull request. */
type PullRequestLinked = {
  type: 'PullRequestLinked';
  data: {
    root_run_id: string;
    pr_id: string;
    url: string;
    provider: string;
    repo_full_name: string | null;
    pr_number: number | null;
    branch: string | null;
    factory_uid: string | null;
    /** The tree root's team (else the team it executes in): the pull request is this team's record. */
    team_uid: string;
    /** When the artifact was reported. */
    at: string;
    cause: { event_id: string; revision: number };
    run: LinkedRun;
    /** Follow-up messages people sent the run so far. */
    follow_ups: number;
    tree_total: Usd;
    pr_shares: PrShare[];
  };
};

/** A person sent the run a follow-up message (human interaction `follow_up_message` of its PRs). */
type RunFollowUpCounted = {
  type: 'RunFollowUpCounted';
  data: {
    root_run_id: string;
    run_id: string;
    at: string;
    cause: { event_id: string; revision: number };
    /** The run's follow-ups from people so far. */
    follow_ups: number;
    /** The pull requests the run produced so far. */
    pr_ids: string[];
  };
};

export type LedgerEvent = RunInferencePriced | RunExecutionPriced | PullRequestLinked | RunFollowUpCounted;

const INTERACTION_KINDS = [
  'opened',
  'code_push',
  'review_approved',
  'review_changes_requested',
  'review_commented',
  'comment',
  'review_comment',
  'pr_action',
] as const;
export type InteractionKind = (typeof INTERACTION_KINDS)[number];

/** What one webhook delivery said of a pull request, taken from its (signed) body. */
export type PullRequestFactsObserved = {
  type: 'PullRequestFactsObserved';
  data: {
    pr_id: string;
    url: string;
    provider: 'github';
    repo_full_name: string;
    pr_number: number;
    factory_uid: string;
    team_uid: string;
    webhook_uid: string;
    delivery_id: string;
    /** The DeliveryAccepted event this came from. */
    source_event_id: string;
    received_at: string;
    /** The GitHub event the body is of, told from its shape (`X-GitHub-Event` is not signed). */
    event: 'pull_request' | 'pull_request_review' | 'pull_request_review_comment' | 'issue_comment' | 'push';
    action: string | null;
    /** When it happened on the code host. */
    at: string;
    sender: { login: string | null; human: boolean };
    /** The pull request as the body describes it (pull_request events, reviews and review comments). */
    snapshot: {
      title: string;
      author_login: string | null;
      state: 'open' | 'closed';
      draft: boolean;
      merged: boolean;
      head_branch: string | null;
      opened_at: string | null;
      merged_at: string | null;
      closed_at: string | null;
      updated_at: string | null;
      additions: number | null;
      deletions: number | null;
      changed_files: number | null;
      commits: number | null;
    } | null;
    /** A person's interaction, once per `key` (a review, comment, pushed head or delivery); null for bots and events that are none. */
    interaction: { kind: InteractionKind; key: string } | null;
    /** A review submitted by a person (its time starts the review stage), or one dismissed (no longer an interaction). */
    review: { id: string; submitted_at: string | null; dismissed: boolean } | null;
  };
};

export type PullRequestEvent = PullRequestFactsObserved;

export const ledgerStream = (rootRunId: string) => `costs-${rootRunId}`;
/** One team's record of one pull request: its document's id, and its facts stream's. */
export const pullRequestKey = (teamUid: string, prId: string) => `${teamUid}:${prId}`;
export const pullRequestStream = (teamUid: string, prId: string) => `pullrequest-${pullRequestKey(teamUid, prId)}`;

export const UNKNOWN = 'UNKNOWN';

export const zeroUsd = (): Usd => ({ inference: 0, compute: 0, platform: 0 });
