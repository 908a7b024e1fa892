/**
 * One document per run, shaped for the run list and `RunItem`. A root run also keeps which runs
 * of its tree are still working, so `task_status=running` needs no scan of descendants.
 */
import { projection, type Docs } from '../src/projector/projection.js';
import type { RecordedEvent } from '../src/eventstore/port.js';
import { type Artifact, type RunEvent, type RunState, type StatusMessage, WORKER_LOST, WORKING_STATES } from '../commands/run/events.js';

export type TaskStatus = 'running' | 'failed' | 'blocked' | 'cancelled' | 'complete' | 'queued';

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
  creator: { type: string; uid: string };
  executor: { type: string; uid: string };
  source: string;
  execution_location: string;
  environment_id: string | null;
  schedule_id: string | null;
  team_uid: string | null;
  executing_team_uid: string;
  factory_uid: string | null;
  agent_identity_uid: string | null;
  parent_run_id: string | null;
  root_run_id: string;
  /** Every ancestor, nearest first, for `ancestor_run_id`. */
  ancestors: string[];
  metadata: Record<string, string>;
  attachments: unknown[];
  artifacts: Array<Artifact & { created_at: string }>;
  artifact_types: string[];
  status_message: StatusMessage | null;
  worker_id: string | null;
  execution_id: string | null;
  usage: Record<string, unknown> | null;
  /** Root runs only: the runs of the tree in a working state. */
  working: string[];
  /** Root runs only: the status of the whole task (tree); null on sub-runs. */
  task_status: TaskStatus | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
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

/** Moves a run to `state` and keeps its root's working set and task status in step. */
async function moveTo(docs: Docs, e: RecordedEvent, runId: string, state: RunState, fields: Partial<RunDoc> = {}) {
  const run = (await docs.get(runId)) as RunDoc | null;
  if (!run) return;
  const at = e.metadata.occurred_at;
  docs.patch(runId, { ...fields, state, updated_at: at });
  const root = runId === run.root_run_id ? { ...run, ...fields, state } : ((await docs.get(run.root_run_id)) as RunDoc | null);
  if (!root) return;
  const working = WORKING_STATES.includes(state) ? [...new Set([...root.working, runId])] : root.working.filter((id) => id !== runId);
  docs.patch(root.run_id, { working, task_status: working.length ? 'running' : rootStatus(root.state) });
}

export const runsProjection = projection<RunEvent>({
  name: 'runs',
  version: 1,
  indexes: [
    ['executing_team_uid', 'state', 'created_at'],
    ['team_uid', 'updated_at'],
    ['creator.uid', 'updated_at'],
    ['conversation_id', 'created_at'],
    ['root_run_id'],
    ['factory_uid', 'updated_at'],
  ],
  on: {
    RunCreated: async (e, docs) => {
      const d = e.data;
      const at = e.metadata.occurred_at;
      const parent = d.parent_run_id ? ((await docs.get(d.parent_run_id)) as RunDoc | null) : null;
      docs.put(d.run_id, {
        run_id: d.run_id,
        conversation_id: d.conversation_id,
        title: d.title,
        prompt: d.prompt,
        state: 'QUEUED',
        skill_spec: d.skill_spec,
        agent_name: (d.config?.name as string | undefined) ?? d.skill_spec?.split(':').pop()?.replace(/\/SKILL\.md$/i, '') ?? null,
        model_id: (d.config?.model_id as string | undefined) ?? null,
        config: d.config,
        mode: d.mode,
        creator: d.creator,
        executor: d.agent_identity_uid ? { type: 'service_account', uid: d.agent_identity_uid } : d.creator,
        source: d.source,
        execution_location: d.execution_location,
        environment_id: d.environment_id,
        schedule_id: d.schedule_id,
        team_uid: d.team_uid,
        executing_team_uid: d.executing_team_uid,
        factory_uid: d.factory_uid,
        agent_identity_uid: d.agent_identity_uid,
        parent_run_id: d.parent_run_id,
        root_run_id: d.root_run_id,
        ancestors: parent ? [parent.run_id, ...parent.ancestors] : [],
        metadata: d.metadata,
        attachments: d.attachments.map(({ blob: _blob, ...a }) => a),
        artifacts: [],
        artifact_types: [],
        status_message: null,
        worker_id: null,
        execution_id: null,
        usage: null,
        working: [],
        task_status: d.parent_run_id ? null : 'running',
        created_at: at,
        updated_at: at,
        started_at: null,
        finished_at: null,
      } satisfies RunDoc);
      await moveTo(docs, e, d.run_id, 'QUEUED');
    },
    RunPromptExtended: async (e, docs) => {
      const run = (await docs.get(e.data.run_id)) as RunDoc | null;
      if (run) docs.patch(run.run_id, { prompt: `${run.prompt}\n\n${e.data.message}`, updated_at: e.metadata.occurred_at });
    },
    RunLeased: (e, docs) => moveTo(docs, e, e.data.run_id, 'PENDING', { worker_id: e.data.worker_id, execution_id: e.data.execution_id }),
    RunLeaseExpired: (e, docs) => moveTo(docs, e, e.data.run_id, 'QUEUED', { worker_id: null, execution_id: null }),
    RunClaimed: (e, docs) => moveTo(docs, e, e.data.run_id, 'CLAIMED'),
    RunStarted: (e, docs) => moveTo(docs, e, e.data.run_id, 'INPROGRESS', { started_at: e.metadata.occurred_at }),
    RunFinished: (e, docs) =>
      moveTo(docs, e, e.data.run_id, e.data.state, { status_message: e.data.status_message, finished_at: e.metadata.occurred_at }),
    RunCancelled: (e, docs) => moveTo(docs, e, e.data.run_id, 'CANCELLED', { finished_at: e.metadata.occurred_at }),
    RunResumed: (e, docs) =>
      moveTo(docs, e, e.data.run_id, 'QUEUED', { status_message: null, finished_at: null, worker_id: null, execution_id: null }),
    RunWorkerLost: (e, docs) =>
      moveTo(docs, e, e.data.run_id, e.data.requeued ? 'QUEUED' : 'ERROR', {
        worker_id: null,
        execution_id: null,
        ...(e.data.requeued ? {} : { finished_at: e.metadata.occurred_at, status_message: WORKER_LOST }),
      }),
    RunArtifactAdded: async (e, docs) => {
      const run = (await docs.get(e.data.run_id)) as RunDoc | null;
      if (!run) return;
      const artifacts = [...run.artifacts, { ...e.data.artifact, created_at: e.metadata.occurred_at }];
      docs.patch(run.run_id, { artifacts, artifact_types: [...new Set(artifacts.map((a) => a.artifact_type))], updated_at: e.metadata.occurred_at });
    },
    RunUsageReported: (e, docs) => docs.patch(e.data.run_id, { usage: e.data.usage }),
  },
});
