/**
 * Creating a run, shared by POST /agent/runs, factory dispatch and automations: checks the
 * parent, the conversation and the agent identity on the write side, stores attachments as
 * blobs, appends `RunCreated`, then adds the run to its conversation.
 */
import { timeOrderedId } from '../../src/ids.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { Forbidden, InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { conversationDecider } from '../conversation/public.js';
import { conversationStream } from '../conversation/events.js';
import { assertUsableEnvironment, environmentDecider } from '../environment/public.js';
import { environmentStream } from '../environment/events.js';
import { identityDecider } from '../identity/public.js';
import { assertUsableModel, modelDecider } from '../model/public.js';
import { MODELS_STREAM } from '../model/events.js';
import { type AgentProfile, identityStream } from '../identity/events.js';
import { periodOf } from '../guardrail/events.js';
import { approvalFor, releaseBudgets, reserveBudgets } from '../guardrail/public.js';
import { runDecider, type RunView } from './run-decider.js';
import {
  type Artifact,
  type Attachment,
  type RunCreatedData,
  type RunSchedule,
  type RunSource,
  type SealedContext,
  runStream,
} from './events.js';
import type { RunRequest } from './schema.js';
import { canView } from './resource.js';
import { runState } from './run-state.js';
import { ownsKey } from '../../src/own-keys.js';

/** How deep orchestration may nest runs below a root. */
export const MAX_RUN_DEPTH = 5;

export interface CreateRunOptions {
  source: RunSource;
  /** The active team: owner of team runs, and whose workers execute every run. */
  team_uid: string;
  run_id?: string;
  factory_uid?: string | null;
  /** Stamped by the platform, overridden by inherited and requested metadata. */
  automatic_metadata?: Record<string, string>;
  /** Factory dispatch: the run gets a factory task (created asynchronously). */
  factory_dispatch?: boolean;
  /** Artifacts the run starts with, appended with RunCreated (an automation's `event-payload.json`). */
  artifacts?: Artifact[];
  /** The scheduled agent whose firing starts the run. */
  schedule?: RunSchedule;
  /** Files of any type the run starts with, as attachments of its prompt (a judge's rubric and conversation). */
  files?: Array<{ file_name: string; mime_type: string; bytes: Buffer }>;
  /** Text for the worker alone, sealed (see RunCreatedData). */
  sealed_context?: SealedContext;
  /** The automation or schedule starting the run requires a team admin's approval first. */
  requires_approval?: 'automation' | 'schedule';
}

/** The harness type a config names (`harness: {type}`), if any. */
const harnessOf = (harness: unknown): string | null => {
  const type = (harness as { type?: unknown } | null | undefined)?.type;
  return typeof type === 'string' && type ? type : null;
};

const invalid = (path: string, message: string) => new InvalidRequest(message, [{ path: `body.${path}`, message }]);

/**
 * The run's settings, resolved when it is created (reference notes §2.3: the run's own, then its
 * agent's): the agent's model, environment, worker host, runner and harness fill what the run's
 * config leaves out. Kept with the run, so changing the agent later leaves the run as it was.
 */
function withAgentSettings(
  config: NonNullable<RunRequest['config']> | null,
  agent: AgentProfile | null,
): NonNullable<RunRequest['config']> | null {
  if (!agent) return config;
  const fill: Record<string, unknown> = {};
  if (agent.base_model) fill.model_id = agent.base_model;
  if (agent.environment_id) fill.environment_id = agent.environment_id;
  if (agent.worker_host) fill.worker_host = agent.worker_host;
  if (agent.default_runner_uid) fill.runner_id = agent.default_runner_uid;
  if (agent.harness) fill.harness = agent.harness;
  const merged = { ...fill, ...(config ?? {}) };
  return Object.keys(merged).length ? (merged as NonNullable<RunRequest['config']>) : config;
}

const defaultTitle = (request: RunRequest) => {
  const text = request.prompt?.trim() || request.skill || request.config?.skill_spec || 'Agent run';
  const line = text.split('\n')[0]!;
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
};

export async function createRun(
  rt: Runtime,
  request: RunRequest,
  context: CommandContext,
  options: CreateRunOptions,
): Promise<RunView> {
  const run_id = options.run_id ?? timeOrderedId();
  const teamRun = request.team ?? true;
  const parent = request.parent_run_id ? await visibleParent(rt, request.parent_run_id, context) : null;
  const conversation_id = request.conversation_id ?? timeOrderedId();
  if (request.conversation_id) await assertVisibleConversation(rt, conversation_id, context);
  const agent = request.agent_identity_uid
    ? await teamAgent(rt, request.agent_identity_uid, teamRun, options.team_uid)
    : null;
  if (request.on_behalf_of) throw new Forbidden('on_behalf_of needs an agent API key with on_behalf_of enabled');
  const attachments = await storedAttachments(rt, request, options);
  const config = withAgentSettings(request.config ?? null, agent);
  const catalogue = await rt.state(modelDecider, MODELS_STREAM);
  assertUsableModel(catalogue, config?.model_id, 'body.config.model_id');
  const environment = config?.environment_id;
  if (environment) {
    const state = await rt.state(environmentDecider, environmentStream(environment));
    assertUsableEnvironment(state, options.team_uid, environment, 'body.config.environment_id');
  }
  const data = createdData(request, context, options, {
    run_id,
    conversation_id,
    parent,
    agent,
    config,
    attachments,
    factory_uid: options.factory_uid ?? agent?.factory_uid ?? null,
    default_model_id: catalogue.catalogue?.default_model_id ?? null,
  });
  const state = await recordCreation(rt, data, parent?.factory_uid ?? null, options, context);
  await joinConversation(rt, state, context);
  return state;
}

/**
 * Appends `RunCreated` once the budgets that pay for the run reserved its estimate (they refuse
 * with `budget_exceeded` when out of room), or with its request for approval when its limits, its
 * automation or its schedule require one; a creation that fails gives the reservations back. A
 * run created already (a reaction seen twice) reserves nothing more.
 */
async function recordCreation(
  rt: Runtime,
  data: RunCreatedData,
  parentFactory: string | null,
  { artifacts, requires_approval }: CreateRunOptions,
  context: CommandContext,
): Promise<RunView> {
  const existing = await rt.state(runDecider, runStream(data.run_id));
  // A sub-run without a factory of its own is paid for by its tree's.
  const payer = { ...data, factory_uid: data.factory_uid ?? parentFactory };
  const approval = await approvalFor(rt, payer, context.now, requires_approval ?? null);
  // A run waiting for approval reserves when it is approved.
  const reserved = existing.status === 'live' || approval ? [] : await reserveBudgets(rt, payer, context);
  try {
    const command = { type: 'CreateRun' as const, data, artifacts, ...(approval ? { approval } : {}) };
    const { state } = await rt.handle(runStream(data.run_id), runDecider, command, context);
    return state as RunView;
  } catch (error) {
    await releaseBudgets(rt, data.run_id, reserved, periodOf(context.now), context);
    throw error;
  }
}

/** The parent run, when the caller may see it and a child would nest no deeper than MAX_RUN_DEPTH. */
async function visibleParent(rt: Runtime, parentRunId: string, context: CommandContext): Promise<RunCreatedData> {
  const parent = (await runState(rt, parentRunId))?.created ?? null;
  const view = parent && (await rt.state(runDecider, runStream(parent.run_id)));
  if (!parent || view?.status !== 'live' || !canView(view, context))
    throw invalid('parent_run_id', 'the parent run does not exist or is not visible');
  if (parent.depth + 1 > MAX_RUN_DEPTH)
    throw invalid('parent_run_id', `runs nest at most ${MAX_RUN_DEPTH} levels deep`);
  return parent;
}

/** A conversation is continued by whoever may view its newest run. */
async function assertVisibleConversation(rt: Runtime, conversationId: string, context: CommandContext): Promise<void> {
  const conversation = await rt.state(conversationDecider, conversationStream(conversationId));
  const latest = conversation.runs.at(-1);
  const visible =
    latest && (latest.team_uid ? ownsKey(context.teams, latest.team_uid) : latest.creator_uid === context.actor.uid);
  if (!visible) throw new NotFound('conversation', conversationId);
}

/** The profile of the agent identity executing a team run: a live agent of the active team. */
async function teamAgent(rt: Runtime, agentUid: string, teamRun: boolean, teamUid: string): Promise<AgentProfile> {
  if (!teamRun) throw invalid('agent_identity_uid', 'an agent identity executes team runs only');
  const agent = await rt.state(identityDecider, identityStream(agentUid));
  if (agent.status !== 'live' || agent.team_uid !== teamUid)
    throw invalid('agent_identity_uid', 'no such agent in the active team');
  return agent.profile;
}

/** The request's attachments (base64) and the options' files, stored as blobs. */
async function storedAttachments(rt: Runtime, request: RunRequest, options: CreateRunOptions): Promise<Attachment[]> {
  const attachments: Attachment[] = [];
  for (const a of request.attachments ?? []) {
    const bytes = Buffer.from(a.data, 'base64');
    attachments.push({
      attachment_id: timeOrderedId(),
      file_name: a.file_name,
      mime_type: a.mime_type,
      size_bytes: bytes.length,
      blob: await rt.blobs.put(bytes),
    });
  }
  for (const f of options.files ?? []) {
    const { file_name, mime_type, bytes } = f;
    const blob = await rt.blobs.put(bytes);
    attachments.push({ attachment_id: timeOrderedId(), file_name, mime_type, size_bytes: bytes.length, blob });
  }
  return attachments;
}

/** What createRun resolved before the run is recorded. */
interface Resolved {
  run_id: string;
  conversation_id: string;
  parent: RunCreatedData | null;
  agent: AgentProfile | null;
  config: NonNullable<RunRequest['config']> | null;
  attachments: Attachment[];
  factory_uid: string | null;
  default_model_id: string | null;
}

/** The data of `RunCreated`: the request, its options and what was resolved for it. */
function createdData(
  request: RunRequest,
  context: CommandContext,
  options: CreateRunOptions,
  { run_id, conversation_id, parent, agent, config, attachments, factory_uid, default_model_id }: Resolved,
): RunCreatedData {
  return {
    run_id,
    conversation_id,
    title: request.title ?? defaultTitle(request),
    prompt: request.prompt ?? '',
    skill_spec: request.skill ?? config?.skill_spec ?? null,
    config,
    mode: request.mode,
    interactive: request.interactive,
    metadata: { ...options.automatic_metadata, ...(parent?.metadata ?? {}), ...(request.metadata ?? {}) },
    team_uid: (request.team ?? true) ? options.team_uid : null,
    executing_team_uid: options.team_uid,
    // Agents and the system (reactors) create runs as service accounts; people as users.
    creator: { type: context.actor.type === 'user' ? 'user' : 'service_account', uid: context.actor.uid },
    agent_identity_uid: request.agent_identity_uid ?? null,
    parent_run_id: parent?.run_id ?? null,
    root_run_id: parent?.root_run_id ?? run_id,
    depth: parent ? parent.depth + 1 : 0,
    factory_uid,
    ...(options.factory_dispatch ? { factory_dispatch: true } : {}),
    source: options.source,
    execution_location: 'REMOTE',
    environment_id: config?.environment_id ?? null,
    schedule_id: options.schedule?.schedule_id ?? null,
    ...(options.schedule ? { schedule: options.schedule } : {}),
    attachments,
    ...(options.sealed_context ? { sealed_context: options.sealed_context } : {}),
    resolved: {
      model_id: config?.model_id ?? agent?.base_model ?? default_model_id,
      harness: harnessOf(config?.harness) ?? harnessOf(agent?.harness) ?? 'oz',
      agent_type: agent?.agent_type ?? null,
    },
  };
}

/**
 * The second step of creating a run: its conversation lists it. Idempotent, so a reaction that
 * finds its run already created (a crash came between the two appends) finishes the creation.
 */
export async function joinConversation(rt: Runtime, run: RunView, context: CommandContext): Promise<void> {
  const { conversation_id, run_id, team_uid, creator } = run.created;
  await rt.execute(
    conversationStream(conversation_id),
    conversationDecider,
    { type: 'AddRun', data: { conversation_id, run_id, team_uid, creator_uid: creator.uid } },
    context,
  );
}
