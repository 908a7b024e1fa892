/**
 * One document per run, shaped for the run list and `RunItem`. A root run also keeps which runs
 * of its tree are still working, so `task_status=running` needs no scan of descendants.
 */
import { projection, type Docs } from '../../src/projector/projection.js';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import {
  type Artifact,
  type Attachment,
  type RunCreatedData,
  type RunEvent,
  type RunSchedule,
  type RunSource,
  type RunState,
  type StatusMessage,
  WORKER_LOST,
  WORKING_STATES,
  nextApproval,
  nextRunState,
  type RunApproval,
} from '../../commands/run/events.js';
import type {
  InferenceUsage,
  MachineUsage,
  RunExecutionPriced,
  RunInferencePriced,
} from '../../commands/analytics/events.js';

type TaskStatus = 'running' | 'failed' | 'blocked' | 'cancelled' | 'complete' | 'queued';

export interface RunDoc {
  [field: string]: unknown;
  run_id: string;
  conversation_id: string;
  title: string;
  prompt: string;
  state: RunState;
  skill_spec: string | null;
  agent_name: string | null;
  model_id: string | null;
  config: Record<string, unknown> | null;
  mode: string;
  creator: RunCreatedData['creator'];
  /** The agent identity that executes the run, else its creator. */
  executor: RunCreatedData['creator'];
  source: RunSource;
  execution_location: RunCreatedData['execution_location'];
  environment_id: string | null;
  schedule_id: string | null;
  schedule: RunSchedule | null;
  team_uid: string | null;
  /** Who lists the run: its team's uid, or `personalOwnerKey(creator)` for a personal run. */
  owner_key: string;
  executing_team_uid: string;
  factory_uid: string | null;
  agent_identity_uid: string | null;
  parent_run_id: string | null;
  root_run_id: string;
  /** Every ancestor, nearest first, for `ancestor_run_id`. */
  ancestors: string[];
  metadata: Record<string, string>;
  /** `key=value` per metadata pair: exact-pair filters (keys may hold `.` and `-`, which field paths cannot). */
  metadata_pairs: string[];
  attachments: unknown[];
  artifacts: Array<Artifact & { created_at: string }>;
  artifact_types: string[];
  status_message: StatusMessage | null;
  worker_id: string | null;
  execution_id: string | null;
  usage: Record<string, unknown> | null;
  usage_reported_at: string | null;
  /** `request_usage`, as the cost ledger priced it: the latest usage report, and the ended executions. */
  priced_inference?: InferenceUsage | null;
  priced_machine?: MachineUsage | null;
  /** Milliseconds of the executions that ended; the open one runs from `execution_started_at`. */
  run_time_ms: number;
  execution_started_at: string | null;
  /** Handoff files of every execution; `/handoff/attachments` lists those of `ended_execution_id`. */
  handoff_files: Array<Attachment & { execution_id: string }>;
  ended_execution_id: string | null;
  /** The urls of EXTERNAL_REFERENCE artifacts, for `run-by-external-reference`. */
  external_reference_urls: string[];
  /** Sort keys on every document: lower-cased title and agent name ('' without one). */
  title_key: string;
  agent_key: string;
  /** 1 without an agent name: `sort_by=agent` ascending sorts on this first, so such runs come last (descending, their '' agent_key does). */
  agent_missing: 0 | 1;
  /** Root runs only: the runs of the tree in a working state. */
  working: string[];
  /** Root runs only: the status of the whole task (tree); null on sub-runs. */
  task_status: TaskStatus | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Its approval (guardrails), when one was asked for; `approval_pending` while no one decided. */
  approval?: RunApproval | null;
  approval_pending?: boolean;
}

const rootStatus = (state: RunState): TaskStatus =>
  WORKING_STATES.includes(state)
    ? 'running'
    : state === 'SUCCEEDED'
      ? 'complete'
      : state === 'BLOCKED'
        ? 'blocked'
        : state === 'CANCELLED'
          ? 'cancelled'
          : 'failed';

/** A run's approval moved (guardrails): the claim skips runs still pending. */
async function approvalMoved(docs: Docs<RunDoc>, e: RecordedEvent<RunEvent>): Promise<void> {
  const run = await docs.get(e.data.run_id);
  if (!run) return;
  const approval = nextApproval(run.approval ?? null, e as RunEvent);
  docs.patch(run.run_id, { approval, approval_pending: approval?.state === 'pending' });
}

/** The `owner_key` of a personal run (`team: false`): never a team uid, which is a bare UUID. */
export const personalOwnerKey = (creatorUid: string) => `user:${creatorUid}`;

/** The name of the skill a spec (`owner/repo:path/to/name/SKILL.md`, `repo:name`) points at. */
export const skillName = (spec: string) =>
  spec
    .slice(spec.indexOf(':') + 1)
    .replace(/\/?SKILL\.md$/i, '')
    .split('/')
    .pop() || spec;

/** Closes the open execution of `run` at `at`: its time adds to the run time (none if it never started). */
const endExecution = (run: RunDoc, at: string, executionId: string | null): Partial<RunDoc> => ({
  run_time_ms: run.run_time_ms + (run.execution_started_at ? Date.parse(at) - Date.parse(run.execution_started_at) : 0),
  execution_started_at: null,
  ended_execution_id: executionId ?? run.ended_execution_id,
});

/**
 * Moves a run to the state `e` leads to (the run's one state machine) and keeps its root's
 * working set and task status in step.
 */
async function moveTo(
  docs: Docs<RunDoc>,
  e: RecordedEvent<RunEvent>,
  changes: Partial<RunDoc> | ((run: RunDoc) => Partial<RunDoc>) = {},
) {
  const runId = e.data.run_id;
  const run = await docs.get(runId);
  if (!run) return;
  const state = nextRunState(run.state, e as RunEvent); // a recorded event is one of the run events
  const at = e.metadata.occurred_at;
  const fields = typeof changes === 'function' ? changes(run) : changes;
  docs.patch(runId, { ...fields, state, updated_at: at });
  const root = runId === run.root_run_id ? { ...run, ...fields, state } : await docs.get(run.root_run_id);
  if (!root) return;
  const working = WORKING_STATES.includes(state)
    ? [...new Set([...root.working, runId])]
    : root.working.filter((id) => id !== runId);
  docs.patch(root.run_id, { working, task_status: working.length ? 'running' : rootStatus(root.state) });
}

export const runsProjection = projection<RunEvent | RunInferencePriced | RunExecutionPriced, RunDoc>({
  name: 'runs',
  version: 4,
  // The run list reads its page from one index per way of seeing runs (owner_key: the team's or
  // the caller's personal runs; executing_team_uid: an agent's team) that ends with the sort, so
  // a page costs what it holds, whatever the team's history (queries/run/runs.ts, findMerged).
  indexes: [
    // The factory filter within each owner (a factory's index alone would walk all of its runs
    // looking for the caller's personal ones, of which there are usually none).
    ['owner_key', 'factory_uid', 'updated_at'],
    ['owner_key', 'factory_uid', 'state', 'updated_at'],
    ['executing_team_uid', 'state', 'created_at'],
    // A queued run's place in its factory's queue (queries/run/runs.ts queuePosition): the runs of
    // that queue ahead of it, not every queued run of the team (7 ms a run by id in the bench's).
    ['executing_team_uid', 'factory_uid', 'state', 'created_at'],
    ...(['updated_at', 'created_at', 'title_key', 'agent_key'] as const).flatMap((sort) => [
      ['owner_key', sort],
      ['executing_team_uid', sort],
    ]),
    ['owner_key', 'agent_missing', 'agent_key'],
    ['executing_team_uid', 'agent_missing', 'agent_key'],
    ['owner_key', 'state', 'updated_at'],
    ['conversation_id', 'created_at'],
    ['root_run_id'],
  ],
  on: {
    RunCreated: async (e, docs) => {
      const d = e.data;
      const at = e.metadata.occurred_at;
      const parent = d.parent_run_id ? await docs.get(d.parent_run_id) : null;
      const skill = d.skill_spec ?? (d.config?.skills as string[] | undefined)?.[0];
      const agent_name = (d.config?.name as string | undefined) ?? (skill ? skillName(skill) : null);
      docs.put(d.run_id, {
        run_id: d.run_id,
        conversation_id: d.conversation_id,
        title: d.title,
        prompt: d.prompt,
        state: 'QUEUED',
        skill_spec: d.skill_spec,
        agent_name,
        model_id: (d.config?.model_id as string | undefined) ?? null,
        config: d.config,
        mode: d.mode,
        creator: d.creator,
        executor: d.agent_identity_uid ? { type: 'service_account', uid: d.agent_identity_uid } : d.creator,
        source: d.source,
        execution_location: d.execution_location,
        environment_id: d.environment_id,
        schedule_id: d.schedule_id,
        schedule: d.schedule ?? null,
        team_uid: d.team_uid,
        owner_key: d.team_uid ?? personalOwnerKey(d.creator.uid),
        executing_team_uid: d.executing_team_uid,
        factory_uid: d.factory_uid,
        agent_identity_uid: d.agent_identity_uid,
        parent_run_id: d.parent_run_id,
        root_run_id: d.root_run_id,
        ancestors: parent ? [parent.run_id, ...parent.ancestors] : [],
        metadata: d.metadata,
        metadata_pairs: Object.entries(d.metadata).map(([key, value]) => `${key}=${value}`),
        attachments: d.attachments.map(({ blob: _blob, ...a }) => a),
        artifacts: [],
        artifact_types: [],
        status_message: null,
        worker_id: null,
        execution_id: null,
        usage: null,
        usage_reported_at: null,
        run_time_ms: 0,
        execution_started_at: null,
        handoff_files: [],
        ended_execution_id: null,
        external_reference_urls: [],
        title_key: d.title.toLowerCase(),
        agent_key: agent_name?.toLowerCase() ?? '',
        agent_missing: agent_name ? 0 : 1,
        working: [],
        task_status: d.parent_run_id ? null : 'running',
        created_at: at,
        updated_at: at,
        started_at: null,
        finished_at: null,
      } satisfies RunDoc);
      await moveTo(docs, e);
    },
    RunPromptExtended: async (e, docs) => {
      const run = await docs.get(e.data.run_id);
      if (run)
        docs.patch(run.run_id, { prompt: `${run.prompt}\n\n${e.data.message}`, updated_at: e.metadata.occurred_at });
    },
    RunLeased: (e, docs) => moveTo(docs, e, { worker_id: e.data.worker_id, execution_id: e.data.execution_id }),
    RunLeaseExpired: (e, docs) => moveTo(docs, e, { worker_id: null, execution_id: null }),
    RunClaimed: (e, docs) => moveTo(docs, e),
    RunStarted: (e, docs) =>
      moveTo(docs, e, {
        started_at: e.metadata.occurred_at,
        execution_started_at: e.metadata.occurred_at,
      }),
    RunFinished: (e, docs) =>
      moveTo(docs, e, (run) => ({
        ...endExecution(run, e.metadata.occurred_at, e.data.execution_id),
        status_message: e.data.status_message,
        finished_at: e.metadata.occurred_at,
      })),
    RunCancelled: (e, docs) =>
      moveTo(docs, e, (run) => ({
        ...endExecution(run, e.metadata.occurred_at, run.execution_id),
        finished_at: e.metadata.occurred_at,
      })),
    RunResumed: (e, docs) =>
      moveTo(docs, e, {
        status_message: null,
        finished_at: null,
        worker_id: null,
        execution_id: null,
      }),
    RunWorkerLost: (e, docs) =>
      moveTo(docs, e, (run) => ({
        worker_id: null,
        execution_id: null,
        ...(e.data.requeued
          ? {}
          : {
              ...endExecution(run, e.metadata.occurred_at, run.execution_id),
              finished_at: e.metadata.occurred_at,
              status_message: WORKER_LOST,
            }),
      })),
    RunArtifactAdded: async (e, docs) => {
      const run = await docs.get(e.data.run_id);
      if (!run) return;
      const { artifact } = e.data;
      const artifacts = [...run.artifacts, { ...artifact, created_at: e.metadata.occurred_at }];
      const url =
        artifact.artifact_type === 'EXTERNAL_REFERENCE' && typeof artifact.url === 'string' ? [artifact.url] : [];
      docs.patch(run.run_id, {
        artifacts,
        artifact_types: [...new Set(artifacts.map((a) => a.artifact_type))],
        external_reference_urls: [...new Set([...run.external_reference_urls, ...url])],
        updated_at: e.metadata.occurred_at,
      });
    },
    RunUsageReported: (e, docs) =>
      docs.patch(e.data.run_id, { usage: e.data.usage, usage_reported_at: e.metadata.occurred_at }),
    RunInferencePriced: (e, docs) => docs.patch(e.data.run_id, { priced_inference: e.data.usage }),
    RunExecutionPriced: (e, docs) => docs.patch(e.data.run_id, { priced_machine: e.data.usage }),
    RunApprovalRequested: (e, docs) => approvalMoved(docs, e),
    RunApproved: (e, docs) => approvalMoved(docs, e),
    RunDenied: (e, docs) => approvalMoved(docs, e),
    RunApprovalExpired: (e, docs) => approvalMoved(docs, e),
    RunHandoffFileAdded: async (e, docs) => {
      const run = await docs.get(e.data.run_id);
      if (run)
        docs.patch(run.run_id, {
          handoff_files: [...run.handoff_files, { ...e.data.attachment, execution_id: e.data.execution_id }],
        });
    },
  },
});
