/**
 * Live factory tasks, one document per task holding everything the API answers with: the task,
 * its author (name and email as last recorded), its current run (the conversation's newest
 * top-level run) with that run's state, and the outputs of its whole run tree. A task by id and a
 * page of tasks read one document per task, and nothing else (issue #25).
 *
 * Its tables, each of one shape, keep what it takes to resolve those whichever event comes first:
 * - `conversations`: per conversation, its bound task, its newest root run (and that run's
 *   state), and the outputs of its run tree so far (a task bound later starts with them);
 * - `runs`: per run, the conversations whose run tree it belongs to (its own and its ancestors'),
 *   so an artifact finds the tasks it is an output of;
 * - `principals`: per user or agent, the author fields tasks show, and how many `authored` chunks
 *   list the tasks it authored; `authored`: those task uids, 500 to a chunk, so renaming an agent
 *   (or a late registration, or a deletion) reaches each of its tasks.
 */
import { projection, type ProjectionDocs } from '../../src/projector/projection.js';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { type RunEvent, type RunState, nextRunState } from '../../commands/run/events.js';
import type { Stage, TaskEvent } from '../../commands/task/events.js';
import type { UserEvent } from '../../commands/user/events.js';
import type { IdentityEvent } from '../../commands/identity/events.js';

export interface TaskAuthor {
  [field: string]: unknown;
  type: 'user' | 'service_account';
  uid: string;
  display_name: string;
  email: string | null;
  photo_url: null;
}

interface TaskCurrentRun {
  [field: string]: unknown;
  run_id: string;
  state: RunState;
  is_run_type_cancellable: boolean;
}

/** An output as the API shows it, and whether it is one of the bound conversation's own runs (lists show only those). */
export interface TaskOutput {
  [field: string]: unknown;
  artifact_type: 'PULL_REQUEST' | 'EXTERNAL_REFERENCE' | 'SCREENSHOT' | 'FILE';
  created_at: string;
  data: Record<string, unknown>;
  in_conversation: boolean;
}

export interface TaskDoc {
  [field: string]: unknown;
  uid: string;
  factory_uid: string;
  team_uid: string;
  conversation_id: string;
  run_id: string;
  title: string;
  description: string | null;
  stage: Stage;
  author_type: 'user' | 'service_account' | null;
  /** The user (or service account) who started the seed run, for `created_by`. */
  author_uid: string | null;
  /** Null while that principal is unknown (not registered yet, or deleted). */
  author: TaskAuthor | null;
  ticket_id: string | null;
  ticket_source: string | null;
  /** The conversation's newest root run, with its state now. */
  current_run: TaskCurrentRun | null;
  /** Of the whole run tree, newest first. */
  outputs: TaskOutput[];
  created_at: string;
  updated_at: string;
}

export interface ConversationLinkDoc {
  [field: string]: unknown;
  latest_root_run_id: string | null;
  current_run: TaskCurrentRun | null;
  task_uid: string | null;
  outputs: TaskOutput[];
}

interface RunLinkDoc {
  [field: string]: unknown;
  conversation_id: string;
  root: boolean;
  /** Its own conversation and its ancestors' (deduplicated). */
  conversations: string[];
  is_run_type_cancellable: boolean;
}

interface PrincipalDoc {
  [field: string]: unknown;
  author: TaskAuthor | null;
  chunks: number;
}

interface AuthoredDoc {
  [field: string]: unknown;
  task_uids: string[];
}

type Tables = {
  conversations: ConversationLinkDoc;
  runs: RunLinkDoc;
  principals: PrincipalDoc;
  authored: AuthoredDoc;
};
type Docs = ProjectionDocs<TaskDoc, Tables>;

/** Artifact types that count as a task's outputs. */
const OUTPUT_TYPES: readonly string[] = ['PULL_REQUEST', 'EXTERNAL_REFERENCE', 'SCREENSHOT', 'FILE'];
const AUTHORED_CHUNK = 500;

const noLink = (): ConversationLinkDoc => ({
  latest_root_run_id: null,
  current_run: null,
  task_uid: null,
  outputs: [],
});

/** Newest first; of two at the same moment, the one recorded first stays first. */
function withOutput(outputs: readonly TaskOutput[], output: TaskOutput, artifactUid: unknown): TaskOutput[] {
  if (outputs.some((o) => o.data.artifact_uid === artifactUid)) return outputs as TaskOutput[];
  const at = outputs.findIndex((o) => o.created_at < output.created_at);
  return at < 0 ? [...outputs, output] : [...outputs.slice(0, at), output, ...outputs.slice(at)];
}

async function linkOf(docs: Docs, conversationId: string): Promise<ConversationLinkDoc> {
  return (await docs.in('conversations').get(conversationId)) ?? noLink();
}

/** Sets every task `principal` authored to show `author` (a rename, a late registration, a deletion). */
async function reauthor(docs: Docs, uid: string, author: TaskAuthor | null) {
  const principals = docs.in('principals');
  const known = await principals.get(uid);
  principals.put(uid, { author, chunks: known?.chunks ?? 0 });
  for (let n = 0; n < (known?.chunks ?? 0); n++) {
    const chunk = await docs.in('authored').get(`${uid}:${n}`);
    for (const task of chunk?.task_uids ?? []) docs.patch(task, { author });
  }
}

/** Records that `uid` authored `task`, and returns what the task shows as its author now. */
async function authored(docs: Docs, uid: string, task: string): Promise<TaskAuthor | null> {
  const principals = docs.in('principals');
  const known = (await principals.get(uid)) ?? { author: null, chunks: 0 };
  const chunks = docs.in('authored');
  let n = Math.max(0, known.chunks - 1);
  let chunk = known.chunks ? await chunks.get(`${uid}:${n}`) : null;
  if (chunk?.task_uids.includes(task)) return known.author;
  if (!chunk || chunk.task_uids.length >= AUTHORED_CHUNK) {
    n = known.chunks;
    chunk = { task_uids: [] };
  }
  chunks.put(`${uid}:${n}`, { task_uids: [...chunk.task_uids, task] });
  if (n + 1 !== known.chunks) principals.put(uid, { ...known, chunks: n + 1 });
  return known.author;
}

/** A run's state changed: the task whose current run it is shows the new state. */
async function runMoved(e: RecordedEvent<RunEvent>, docs: Docs) {
  const run = await docs.in('runs').get(e.data.run_id);
  if (!run?.root) return;
  const link = await docs.in('conversations').get(run.conversation_id);
  if (!link?.current_run || link.current_run.run_id !== e.data.run_id) return;
  const current_run = { ...link.current_run, state: nextRunState(link.current_run.state, e as unknown as RunEvent) };
  docs.in('conversations').put(run.conversation_id, { ...link, current_run });
  if (link.task_uid) docs.patch(link.task_uid, { current_run });
}

/** Every event that moves a run to another state (the run's state machine, commands/run/events.ts). */
const moved = (e: RecordedEvent<RunEvent>, docs: Docs) => runMoved(e, docs);

export const tasksProjection = projection<TaskEvent | RunEvent | UserEvent | IdentityEvent, TaskDoc, Tables>({
  name: 'tasks',
  version: 3,
  // A board shows one stage per column: the stage filter seeks, newest first.
  indexes: [
    ['factory_uid', 'created_at'],
    ['factory_uid', 'updated_at'],
    ['factory_uid', 'stage', 'created_at'],
    ['factory_uid', 'stage', 'updated_at'],
    ['conversation_id'],
  ],
  tables: { conversations: [], runs: [], principals: [], authored: [] },
  on: {
    RunCreated: async (e, docs) => {
      const d = e.data;
      const parent = d.parent_run_id ? await docs.in('runs').get(d.parent_run_id) : null;
      const is_run_type_cancellable = d.execution_location !== 'LOCAL' && d.source !== 'GITHUB_ACTION';
      docs.in('runs').put(d.run_id, {
        conversation_id: d.conversation_id,
        root: d.parent_run_id === null,
        conversations: [...new Set([d.conversation_id, ...(parent?.conversations ?? [])])],
        is_run_type_cancellable,
      });
      if (d.parent_run_id !== null) return;
      const link = await linkOf(docs, d.conversation_id);
      const current_run: TaskCurrentRun = { run_id: d.run_id, state: 'QUEUED', is_run_type_cancellable };
      docs.in('conversations').put(d.conversation_id, { ...link, latest_root_run_id: d.run_id, current_run });
      // A new top-level run does not bump updated_at: only changes to the task itself do.
      if (link.task_uid) docs.patch(link.task_uid, { current_run });
    },
    RunLeased: moved,
    RunLeaseExpired: moved,
    RunClaimed: moved,
    RunStarted: moved,
    RunFinished: moved,
    RunCancelled: moved,
    RunResumed: moved,
    RunWorkerLost: moved,
    RunArtifactAdded: async (e, docs) => {
      const { artifact } = e.data;
      if (!OUTPUT_TYPES.includes(artifact.artifact_type)) return;
      const run = await docs.in('runs').get(e.data.run_id);
      if (!run) return;
      const { artifact_type, public: _public, blob: _blob, content: _content, ...data } = artifact;
      for (const conversation of run.conversations) {
        const output: TaskOutput = {
          artifact_type: artifact_type as TaskOutput['artifact_type'],
          created_at: e.metadata.occurred_at,
          data,
          in_conversation: conversation === run.conversation_id,
        };
        const link = await linkOf(docs, conversation);
        const outputs = withOutput(link.outputs, output, artifact.artifact_uid);
        docs.in('conversations').put(conversation, { ...link, outputs });
        if (link.task_uid) docs.patch(link.task_uid, { outputs });
      }
    },
    UserRegistered: (e, docs) =>
      reauthor(docs, e.data.uid, {
        type: 'user',
        uid: e.data.uid,
        display_name: e.data.display_name,
        email: e.data.email,
        photo_url: null,
      }),
    AgentIdentityCreated: (e, docs) =>
      reauthor(docs, e.data.uid, {
        type: 'service_account',
        uid: e.data.uid,
        display_name: e.data.profile.name,
        email: null,
        photo_url: null,
      }),
    AgentIdentityUpdated: async (e, docs) => {
      const name = e.data.changes.name;
      if (name === undefined) return;
      const known = await docs.in('principals').get(e.data.uid);
      if (known?.author?.display_name === name) return;
      await reauthor(docs, e.data.uid, {
        type: 'service_account',
        uid: e.data.uid,
        display_name: name,
        email: null,
        photo_url: null,
      });
    },
    AgentIdentityDeleted: (e, docs) => reauthor(docs, e.data.uid, null),
    TaskCreated: async (e, docs) => {
      const d = e.data;
      const link = await linkOf(docs, d.conversation_id);
      const author = d.author ? await authored(docs, d.author.uid, d.uid) : null;
      docs.put(d.uid, {
        uid: d.uid,
        factory_uid: d.factory_uid,
        team_uid: d.team_uid,
        conversation_id: d.conversation_id,
        run_id: d.run_id,
        title: d.title,
        description: d.description,
        stage: d.stage,
        author_type: d.author?.type ?? null,
        author_uid: d.author?.uid ?? null,
        author,
        ticket_id: d.ticket_id ?? null,
        ticket_source: d.ticket_source ?? null,
        current_run: link.current_run,
        outputs: link.outputs,
        created_at: e.metadata.occurred_at,
        updated_at: e.metadata.occurred_at,
      } satisfies TaskDoc);
      docs.in('conversations').put(d.conversation_id, { ...link, task_uid: d.uid });
    },
    TaskUpdated: (e, docs) => docs.patch(e.data.uid, { ...e.data.changes, updated_at: e.metadata.occurred_at }),
    TaskStageChanged: (e, docs) => docs.patch(e.data.uid, { stage: e.data.to, updated_at: e.metadata.occurred_at }),
    TaskCancelled: (e, docs) => docs.patch(e.data.uid, { stage: 'CANCELLED', updated_at: e.metadata.occurred_at }),
    TaskDeleted: async (e, docs) => {
      docs.delete(e.data.uid);
      const links = docs.in('conversations');
      const link = await links.get(e.data.conversation_id);
      if (link?.task_uid === e.data.uid) links.put(e.data.conversation_id, { ...link, task_uid: null });
    },
  },
});
