/**
 * The run as the API answers it, and who may see one. A run document renders as the hosted
 * service's `RunItem`: optional fields without a value are left out (the hosted schema marks them
 * optional, not nullable); `started_at` and `finished_at` are null until they happen.
 */
import { z } from 'zod';
import { uidParam } from '../../src/http/schemas.js';
import type { Principal } from '../../src/http/principal.js';
import type { Actor } from '../../src/kernel/decider.js';
import {
  RUN_SOURCES,
  RUN_STATES,
  type RunCreatedData,
  type RunState,
  type StatusMessage,
  TERMINAL_STATES,
} from './events.js';
import type { ArtifactDoc } from '../../projections/run/artifacts.js';
import { type RunDoc, skillName } from '../../projections/run/runs.js';
import type { InferenceUsage, MachineUsage } from '../analytics/events.js';
import { own, ownsKey } from '../../src/own-keys.js';

/** `ms` as an ISO-8601 duration in hours, minutes and seconds: `PT2M30S`, `PT1H0M5.25S`, `PT0S`. */
export function isoDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms)) / 1000;
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = Number((total % 60).toFixed(3));
  if (!hours && !minutes) return `PT${seconds}S`;
  return `PT${hours ? `${hours}H` : ''}${minutes}M${seconds}S`;
}

/** The time the run's executions took until `now`, the open one included. */
const runTimeMs = (run: RunDoc, now: string) =>
  run.run_time_ms +
  (run.execution_started_at ? Math.max(0, Date.parse(now) - Date.parse(run.execution_started_at)) : 0);

/** A run that failed in environment setup keeps its session for debugging until this moment. */
const debugWindowOpen = (run: RunDoc, now: string) =>
  run.state === 'FAILED' &&
  run.status_message?.error_code === 'environment_setup_failed' &&
  typeof run.status_message.session_debug_until === 'string' &&
  run.status_message.session_debug_until > now;

/** `session_debug_until` is shown only while the window is open. */
function statusMessage(message: StatusMessage, open: boolean): StatusMessage {
  const { session_debug_until, ...rest } = message;
  return open && session_debug_until ? { ...rest, session_debug_until } : rest;
}

/** The skill a spec points at: its name and its path in the repository. */
const agentSkill = (spec: string) => ({ name: skillName(spec), full_path: spec.slice(spec.indexOf(':') + 1) });

/** Artifacts as `{artifact_type, created_at, data}`; the blob id and inline content stay inside. */
export const artifactItemSchema = z.object({
  artifact_type: z.enum(['PLAN', 'PULL_REQUEST', 'SCREENSHOT', 'FILE', 'EXTERNAL_REFERENCE']),
  created_at: z.string(),
  data: z.record(z.string(), z.unknown()).describe('The fields of the artifact type (url, branch, filename, …)'),
});

export const artifactItem = ({
  artifact_type,
  created_at,
  public: _public,
  blob: _blob,
  content: _content,
  ...data
}: RunDoc['artifacts'][number]): z.infer<typeof artifactItemSchema> => ({
  artifact_type,
  created_at,
  data,
});

/** `run_id` in the path of every route on one run. */
export const runParams = z.object({ run_id: uidParam });

export const runStateSchema = z.enum(RUN_STATES);

export const principalSchema = z.object({ type: z.enum(['user', 'service_account']), uid: z.string() });

/** `status_message` of a run that finished (or failed to start). */
export const statusMessageSchema = z.object({
  message: z.string(),
  error_code: z.string().nullable().optional().describe('A PlatformErrorCode such as environment_setup_failed'),
  retryable: z.boolean().optional(),
  session_debug_until: z
    .string()
    .nullable()
    .optional()
    .describe('Until when a failed environment setup keeps its session for debugging; shown while that window is open'),
});

// `request_usage` (reference notes §2.5): the cumulative snapshot the worker last reported.
const costUsd = z
  .object({
    input_cost_usd: z.number(),
    input_cache_read_cost_usd: z.number(),
    input_cache_write_cost_usd: z.number(),
    output_cost_usd: z.number(),
  })
  .partial();
const inferenceUsage = z
  .object({
    cost_usd: costUsd,
    token_count: z
      .object({ input: z.number(), input_cache_read: z.number(), input_cache_write: z.number(), output: z.number() })
      .partial(),
    web_search_count: z.number(),
    web_search_cost_usd: z.number(),
  })
  .partial();
const byModel = z.record(z.string(), inferenceUsage).describe('Usage by model id');

export const requestUsageSchema = z
  .object({
    inference_cost: z.number().describe('Credits'),
    compute_cost: z.number().describe('Credits'),
    platform_cost: z.number().describe('Credits'),
    inference_cost_usd: z.number().describe("USD, at the team's current credit price (approximate)"),
    compute_cost_usd: z.number(),
    platform_cost_usd: z.number(),
    total_tokens: z.number(),
    inference_cost_breakdown_usd: costUsd,
    model_token_usage: z.array(
      z.object({
        model_id: z.string(),
        usage_type: z.enum(['warp', 'byok', 'custom_endpoint']).optional(),
        total_tokens: z.number(),
        tokens_by_category: z.record(z.string(), z.number()).optional(),
      }),
    ),
    usage_by_category: z
      .record(
        z.string(),
        z
          .object({
            platform_usage_usd: z.number(),
            direct_api_inference_usage: byModel,
            byok_inference_usage: byModel,
            custom_endpoint_inference_usage: byModel,
          })
          .partial(),
      )
      .describe('Usage by category, such as primary_agent or conversation_compaction'),
  })
  .partial();

/** `AmbientAgentConfig` as the run resolved it: the known fields, and the rest as the run was given them. */
const agentConfigSchema = z.looseObject({
  name: z.string().optional().describe("The agent's label: the config's name, else the skill's name"),
  model_id: z.string().optional(),
  base_prompt: z.string().optional(),
  environment_id: z.string().optional(),
  skill_spec: z.string().optional().describe('owner/repo:path of the skill the run follows'),
  skills: z.array(z.string()).optional(),
  idle_timeout_minutes: z.number().optional(),
  worker_host: z.string().optional(),
  computer_use_enabled: z.boolean().optional(),
  harness: z.looseObject({ type: z.enum(['oz', 'claude', 'gemini', 'codex']).optional() }).optional(),
  credential_strategy: z.enum(['EXECUTOR', 'CREATOR']).optional(),
});

/**
 * The hosted service's `RunItem` (reference notes §2.5). Optional fields without a value are left
 * out; `started_at` and `finished_at` are null until they happen.
 */
export const runItem = z.object({
  run_id: z.string(),
  task_id: z.string().describe('Deprecated: the run id'),
  title: z.string(),
  state: runStateSchema,
  prompt: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  run_time: z
    .string()
    .optional()
    .describe('ISO-8601 duration of its executions so far, such as PT2M30S; once an execution started'),
  execution_location: z.enum(['REMOTE', 'LOCAL']),
  status_message: statusMessageSchema.optional(),
  source: z.enum(RUN_SOURCES),
  schedule: z
    .object({
      schedule_id: z.string(),
      schedule_name: z.string(),
      cron_schedule: z.string().nullable().describe('Null for a schedule that follows an rrule'),
      rrule: z.string().optional(),
    })
    .optional()
    .describe('The scheduled agent whose firing started the run'),
  session_id: z.string().optional().describe('Once an execution started: the conversation it continues'),
  session_link: z.string().optional(),
  trigger_url: z.string().optional().describe('The ticket that started the run (metadata ticket_url)'),
  creator: principalSchema,
  executor: principalSchema.describe('The agent identity that executes the run, else its creator'),
  request_usage: requestUsageSchema.optional(),
  agent_config: agentConfigSchema,
  agent_skill: z.object({ name: z.string(), full_path: z.string() }).optional(),
  conversation_id: z.string(),
  parent_run_id: z.string().optional(),
  root_run_id: z.string(),
  factory_uid: z.string().optional(),
  is_sandbox_running: z.boolean(),
  is_run_type_cancellable: z
    .boolean()
    .describe('False for local runs and code-host actions, which the server cannot stop'),
  debug_agent_available: z
    .boolean()
    .describe('A failed environment setup keeps its session: a follow-up starts a debug agent there'),
  artifacts: z.array(artifactItemSchema),
  scope: z.object({ type: z.enum(['User', 'Team']), uid: z.string() }),
  metadata: z.record(z.string(), z.string()),
  approval: z
    .object({
      state: z.enum(['pending', 'approved', 'denied', 'expired']),
      rule: z.enum(['factory', 'team', 'automation', 'schedule']).describe('What asked for the approval'),
      requested_at: z.string(),
      expires_at: z.string().describe('When a pending approval expires and the run is cancelled'),
      decided_by: principalSchema.nullable(),
      decided_at: z.string().nullable(),
    })
    .optional()
    .describe('Extension (guardrails): present on a run that needed a team admin’s approval before it may begin'),
  queue_position: z
    .number()
    .int()
    .optional()
    .describe('Extension (guardrails): a QUEUED run’s place in its queue, 1 being next (GET of one run only)'),
});

export type RunItem = z.infer<typeof runItem>;

/**
 * `request_usage` as the cost ledger priced it (the run's latest usage report at the catalogue's
 * prices, its ended executions' machine and platform time at the rates); absent until priced.
 * The usage of the ledger's latest `RunInferencePriced` and `RunExecutionPriced` of the run.
 */
export function requestUsageOf(
  inference: InferenceUsage | null,
  machine: MachineUsage | null,
): z.infer<typeof requestUsageSchema> | null {
  if (!inference && !machine) return null;
  return {
    inference_cost: inference?.inference_cost ?? 0,
    compute_cost: machine?.compute_cost ?? 0,
    platform_cost: machine?.platform_cost ?? 0,
    inference_cost_usd: inference?.inference_cost_usd ?? 0,
    compute_cost_usd: machine?.compute_cost_usd ?? 0,
    platform_cost_usd: machine?.platform_cost_usd ?? 0,
    total_tokens: inference?.total_tokens ?? 0,
    inference_cost_breakdown_usd: inference?.inference_cost_breakdown_usd ?? {
      input_cost_usd: 0,
      input_cache_read_cost_usd: 0,
      input_cache_write_cost_usd: 0,
      output_cost_usd: 0,
    },
    model_token_usage: inference?.model_token_usage ?? [],
    ...(inference?.usage_by_category ? { usage_by_category: inference.usage_by_category as never } : {}),
  };
}

const present = <K extends string, V>(key: K, value: V | null | undefined) =>
  value === null || value === undefined ? {} : ({ [key]: value } as Record<K, V>);

export interface RunItemOptions {
  /** `PUBLIC_BASE_URL`, the base of session links. */
  baseUrl: string;
  /** The moment the item describes: run time and debug windows are reckoned at it. */
  now: string;
  /** A queued run's place in its queue, when the caller counted it. */
  queue_position?: number | null;
}

export function toRunItem(run: RunDoc, { baseUrl, now, queue_position }: RunItemOptions): RunItem {
  const debugging = debugWindowOpen(run, now);
  const skillSpec = run.skill_spec ?? (run.config?.skills as string[] | undefined)?.[0] ?? null;
  const started = run.started_at !== null;
  return {
    run_id: run.run_id,
    task_id: run.run_id,
    title: run.title,
    state: run.state,
    prompt: run.prompt,
    created_at: run.created_at,
    updated_at: run.updated_at,
    started_at: run.started_at,
    finished_at: run.finished_at,
    ...(started ? { run_time: isoDuration(runTimeMs(run, now)) } : {}),
    execution_location: run.execution_location,
    ...present('status_message', run.status_message && statusMessage(run.status_message, debugging)),
    source: run.source,
    ...present('schedule', run.schedule),
    // A session exists once an execution started; it is named after the conversation it continues.
    ...(started ? { session_id: run.conversation_id, session_link: `${baseUrl}/sessions/${run.conversation_id}` } : {}),
    ...present('trigger_url', run.metadata.ticket_url),
    creator: run.creator,
    executor: run.executor,
    ...present('request_usage', requestUsageOf(run.priced_inference ?? null, run.priced_machine ?? null)),
    agent_config: { ...run.config, ...present('name', run.agent_name), ...present('skill_spec', skillSpec) },
    ...present('agent_skill', skillSpec && agentSkill(skillSpec)),
    conversation_id: run.conversation_id,
    ...present('parent_run_id', run.parent_run_id),
    root_run_id: run.root_run_id,
    ...present('factory_uid', run.factory_uid),
    is_sandbox_running: run.state === 'CLAIMED' || run.state === 'INPROGRESS' || debugging,
    is_run_type_cancellable: isCancellableType(run),
    debug_agent_available: debugging,
    artifacts: run.artifacts.map(artifactItem),
    scope: run.team_uid ? { type: 'Team', uid: run.team_uid } : { type: 'User', uid: run.creator.uid },
    metadata: run.metadata,
    ...present('approval', run.approval),
    ...present('queue_position', queue_position),
  };
}

/** Local runs and code-host actions run where the server cannot stop them. */
export const isCancellableType = (run: Pick<RunCreatedData, 'execution_location' | 'source'>) =>
  run.execution_location !== 'LOCAL' && run.source !== 'GITHUB_ACTION';

export const isTerminal = (state: RunState) => TERMINAL_STATES.includes(state);

/**
 * A team run is visible to its team, a personal run to its creator; the agents (workers) of the
 * executing team see the runs they may execute, and the system sees everything.
 */
export function canView(
  run: { team_uid: string | null; creator_uid: string; executing_team_uid: string },
  context: { actor: Actor; teams: Readonly<Record<string, unknown>> },
): boolean {
  if (context.actor.type === 'system') return true;
  if (context.actor.type === 'agent' && ownsKey(context.teams, run.executing_team_uid)) return true;
  return run.team_uid ? ownsKey(context.teams, run.team_uid) : run.creator_uid === context.actor.uid;
}

/** The decision context of a principal, for `canView`. */
export const viewerOf = (principal: Principal) => ({
  actor: { type: principal.type, uid: principal.uid },
  teams: Object.fromEntries(principal.teams),
});

const EXTENSIONS: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'text/markdown': '.md',
};

export const mimeOf = (a: ArtifactDoc) =>
  typeof a.data.mime_type === 'string'
    ? a.data.mime_type
    : a.artifact_type === 'PLAN'
      ? 'text/markdown'
      : 'application/octet-stream';

export const filenameOf = (a: ArtifactDoc) =>
  typeof a.data.filename === 'string' && a.data.filename
    ? a.data.filename
    : `${a.artifact_uid}${own(EXTENSIONS, mimeOf(a)) ?? ''}`;
