/** The life of one agent run: `run-<run_id>`. */

export const RUN_STATES = [
  'QUEUED',
  'PENDING',
  'CLAIMED',
  'INPROGRESS',
  'SUCCEEDED',
  'FAILED',
  'ERROR',
  'BLOCKED',
  'CANCELLED',
] as const;
export type RunState = (typeof RUN_STATES)[number];

/** States a worker reports when it finishes an execution. */
export const FINISH_STATES = ['SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED'] as const;
export type FinishState = (typeof FINISH_STATES)[number];

export const TERMINAL_STATES: readonly RunState[] = [...FINISH_STATES, 'CANCELLED'];
/** Queued, pending, claimed or in progress: the run (or a descendant) is still working. */
export const WORKING_STATES: readonly RunState[] = ['QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS'];

export const RUN_SOURCES = [
  'LINEAR',
  'API',
  'SLACK',
  'LOCAL',
  'SCHEDULED_AGENT',
  'WEB_APP',
  'GITHUB_ACTION',
  'CLOUD_MODE',
  'CLI',
  'JIRA',
  'SELF_IMPROVEMENT',
  'GITHUB_WEBHOOK',
  'GITLAB_WEBHOOK',
  'AUTOFIX',
  'RUN_SCORER',
  'ORCHESTRATION',
  'BENCHMARK_TRIAL',
] as const;
export type RunSource = (typeof RUN_SOURCES)[number];

/** What an action block of a message does (the normalized conversation's categories, reference notes §2.9). */
export const ACTION_CATEGORIES = [
  'command',
  'files',
  'search',
  'integration',
  'documents',
  'computer',
  'review',
  'skill',
] as const;

export type RunMode = 'normal' | 'plan' | 'orchestrate';

export interface StatusMessage {
  [field: string]: unknown;
  message: string;
  error_code?: string | null;
  retryable?: boolean;
  /** Until when a failed environment setup keeps its sandbox for debugging follow-ups. */
  session_debug_until?: string | null;
}

/** Why a run errs when its worker disappears mid-execution. */
export const WORKER_LOST: StatusMessage = {
  message: 'The worker executing the run stopped heartbeating',
  error_code: 'resource_unavailable',
  retryable: true,
};

type Principal = { type: 'user' | 'service_account'; uid: string };

export type Attachment = {
  attachment_id: string;
  file_name: string;
  mime_type: string;
  size_bytes: number;
  blob: string;
};

export type ArtifactType = 'PLAN' | 'PULL_REQUEST' | 'SCREENSHOT' | 'FILE' | 'EXTERNAL_REFERENCE';

export type Artifact = {
  artifact_uid: string;
  artifact_type: ArtifactType;
  /** Public artifacts can be read without a credential. */
  public: boolean;
  /** Type-specific fields (url, branch, filename, mime_type, blob, content, reference_type, ...). */
  [field: string]: unknown;
};

/** One question a run asks its requester (`InboxItem.questions` of the hosted service); an empty `options` asks for free text. */
export type RunQuestion = {
  id: string;
  question: string;
  options: string[];
  type: 'single_select' | 'multi_select';
  recommended_option_index?: number;
};

/** A scheduled run's schedule (`RunItem.schedule`); `rrule` is set instead of a cron line for RRULE schedules. */
export type RunSchedule = { schedule_id: string; schedule_name: string; cron_schedule: string | null; rrule?: string };

export type RunCreatedData = {
  run_id: string;
  conversation_id: string;
  title: string;
  prompt: string;
  skill_spec: string | null;
  config: Record<string, unknown> | null;
  mode: RunMode;
  interactive: boolean;
  metadata: Record<string, string>;
  /** The team that owns the run; null for a personal run (`team: false`). */
  team_uid: string | null;
  /** The team whose workers execute the run: the active team at creation, personal runs too. */
  executing_team_uid: string;
  creator: Principal;
  agent_identity_uid: string | null;
  parent_run_id: string | null;
  root_run_id: string;
  depth: number;
  factory_uid: string | null;
  /** Dispatched to its factory's foreman (POST /factory/{uid}/runs): a reactor creates its task. */
  factory_dispatch?: boolean;
  source: RunSource;
  execution_location: 'REMOTE' | 'LOCAL';
  environment_id: string | null;
  schedule_id: string | null;
  /** The scheduled agent that started it, as it was named at the firing. */
  schedule?: RunSchedule;
  attachments: Attachment[];
  /**
   * Text for the worker only, sealed under a destroyable key (src/keyring.ts): the assignment
   * appends it to the prompt when the run is handed out, while the key lives; the run's records
   * never hold it open (a self-improvement run's judge reasons).
   */
  sealed_context?: SealedContext;
  /**
   * What the run was configured to use once defaults applied (the run's config, else its agent's,
   * else the catalogue's default model and the `oz` harness), and its agent's type: facts of its
   * creation, for the factory's metrics. Absent on runs created before they were recorded.
   */
  resolved?: { model_id: string | null; harness: string; agent_type: string | null };
};

export type SealedContext = { subject: string; sealed: string; withdrawn: string };

export type RunEvent =
  | { type: 'RunCreated'; data: RunCreatedData }
  /** A follow-up sent before any execution started joins the prompt. */
  | { type: 'RunPromptExtended'; data: { run_id: string; message: string; mode: RunMode | null } }
  /** A worker was handed the run (PENDING) until `lease_expires_at`. */
  | { type: 'RunLeased'; data: { run_id: string; worker_id: string; execution_id: string; lease_expires_at: string } }
  | { type: 'RunLeaseExpired'; data: { run_id: string; worker_id: string } }
  | { type: 'RunClaimed'; data: { run_id: string; worker_id: string; execution_id: string } }
  | { type: 'RunStarted'; data: { run_id: string; execution_id: string } }
  | { type: 'RunTimelineRecorded'; data: { run_id: string; name: string; detail: Record<string, unknown> } }
  | {
      type: 'RunMessageRecorded';
      data: {
        run_id: string;
        conversation_id: string;
        message_id: string;
        step_id: string | null;
        parent_step_id: string | null;
        role: string;
        content: unknown[];
      };
    }
  | { type: 'RunArtifactAdded'; data: { run_id: string; artifact: Artifact } }
  /** The run asks its requester something; a follow-up answers it (see commands/inbox). */
  | { type: 'RunQuestionAsked'; data: { run_id: string; ask_id: string; questions: RunQuestion[] } }
  /** A file uploaded ahead of a follow-up; the follow-up names it by `attachment_id`. */
  | { type: 'RunAttachmentPrepared'; data: { run_id: string; attachment: Attachment } }
  | { type: 'RunUsageReported'; data: { run_id: string; usage: Record<string, unknown> } }
  | { type: 'RunHandoffFileAdded'; data: { run_id: string; execution_id: string; attachment: Attachment } }
  | {
      type: 'RunFinished';
      data: { run_id: string; execution_id: string; state: FinishState; status_message: StatusMessage | null };
    }
  | { type: 'RunCancelled'; data: { run_id: string; reason: string } }
  | { type: 'RunInterruptRequested'; data: { run_id: string; execution_id: string } }
  /** Delivered to the live execution (running) or to the retained debug session (setup failure). */
  | {
      type: 'RunFollowupDelivered';
      data: {
        run_id: string;
        execution_id: string;
        message: string;
        mode: RunMode | null;
        attachments: string[];
        to: 'execution' | 'debug_session';
      };
    }
  /** An ended run starts a new execution, in a new sandbox, with the follow-up as its prompt. */
  | { type: 'RunResumed'; data: { run_id: string; message: string; mode: RunMode | null; attachments: string[] } }
  /** Its worker stopped heartbeating: a run that never started is queued again, else it errs. */
  | { type: 'RunWorkerLost'; data: { run_id: string; worker_id: string; requeued: boolean } }
  /** The run waits in QUEUED for a team admin's approval until `expires_at` (guardrails). */
  | {
      type: 'RunApprovalRequested';
      data: { run_id: string; rule: ApprovalRule; requested_at: string; expires_at: string };
    }
  /** An admin approved it: it may be handed to a worker. */
  | { type: 'RunApproved'; data: { run_id: string; by: Principal; at: string } }
  /** An admin denied it; a `RunCancelled` follows. */
  | { type: 'RunDenied'; data: { run_id: string; by: Principal; at: string; reason: string | null } }
  /** No one decided within the approval timeout; a `RunCancelled` follows. */
  | { type: 'RunApprovalExpired'; data: { run_id: string; at: string } }
  /** Its execution made no progress for too long, or ran too long; a `RunFinished` (ERROR) follows, and its worker is told. */
  | { type: 'RunTimedOut'; data: { run_id: string; execution_id: string; rule: 'stuck' | 'max_duration' } };

/** What asked for a run's approval: its factory's or team's limits, its automation or its schedule. */
export type ApprovalRule = 'factory' | 'team' | 'automation' | 'schedule';

/** A run's approval, as its events left it (`approval` on the run resource). */
export interface RunApproval {
  state: 'pending' | 'approved' | 'denied' | 'expired';
  rule: ApprovalRule;
  requested_at: string;
  expires_at: string;
  decided_by: Principal | null;
  decided_at: string | null;
}

/** The approval an approval event leaves (the approval before it, for decisions). */
export function nextApproval(before: RunApproval | null, event: RunEvent): RunApproval | null {
  switch (event.type) {
    case 'RunApprovalRequested':
      return {
        state: 'pending',
        rule: event.data.rule,
        requested_at: event.data.requested_at,
        expires_at: event.data.expires_at,
        decided_by: null,
        decided_at: null,
      };
    case 'RunApproved':
    case 'RunDenied':
      return (
        before && {
          ...before,
          state: event.type === 'RunApproved' ? 'approved' : 'denied',
          decided_by: event.data.by,
          decided_at: event.data.at,
        }
      );
    case 'RunApprovalExpired':
      return before && { ...before, state: 'expired', decided_at: event.data.at };
    default:
      return before;
  }
}

export const runStream = (runId: string) => `run-${runId}`;

/**
 * The run's state machine, written once: which state each event moves a run to. The decider's
 * `evolve`, the runs read model and a worker's assignment all fold states with it.
 */
export function nextRunState(state: RunState, event: RunEvent): RunState {
  switch (event.type) {
    case 'RunCreated':
    case 'RunLeaseExpired':
    case 'RunResumed':
      return 'QUEUED';
    case 'RunLeased':
      return 'PENDING';
    case 'RunClaimed':
      return 'CLAIMED';
    case 'RunStarted':
      return 'INPROGRESS';
    case 'RunFinished':
      return event.data.state;
    case 'RunCancelled':
      return 'CANCELLED';
    case 'RunWorkerLost':
      return event.data.requeued ? 'QUEUED' : 'ERROR';
    default:
      return state;
  }
}

/** A worker holds the run (it was handed it, claimed it or runs it). */
export const HELD_STATES: readonly RunState[] = ['PENDING', 'CLAIMED', 'INPROGRESS'];
