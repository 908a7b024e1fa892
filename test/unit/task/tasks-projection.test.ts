import { describe, expect, it } from 'vitest';
import type { RunCreatedData } from '../../../commands/run/events.js';
import { tasksProjection } from '../../../projections/task/tasks.js';
import { metadata, project, recorded } from '../../helpers/projection-spec.js';

const runCreated = (run_id: string, conversation_id: string, parent_run_id: string | null = null) => ({
  type: 'RunCreated',
  data: { run_id, conversation_id, parent_run_id, root_run_id: parent_run_id ?? run_id } as Partial<RunCreatedData>,
});

const taskCreated = (uid: string, conversation_id: string, at = '2026-01-01T00:00:00.000Z') => ({
  type: 'TaskCreated',
  data: {
    uid,
    factory_uid: 'f-1',
    team_uid: 't-1',
    conversation_id,
    run_id: 'r-1',
    title: 'Fix the build',
    description: null,
    stage: 'TRIAGE',
    author: { type: 'user', uid: 'u-1' },
    ticket_id: 'PAY-1',
    ticket_source: 'linear',
  },
  metadata: metadata(at),
});

const history = recorded([
  runCreated('r-1', 'c-1'),
  taskCreated('task-1', 'c-1'),
  runCreated('r-1-child', 'c-other', 'r-1'),
  {
    type: 'TaskUpdated',
    data: { uid: 'task-1', changes: { description: 'CI is red' } },
    metadata: metadata('2026-01-02T00:00:00.000Z'),
  },
  runCreated('r-2', 'c-1'),
  {
    type: 'TaskStageChanged',
    data: { uid: 'task-1', from: 'TRIAGE', to: 'SPEC' },
    metadata: metadata('2026-01-03T00:00:00.000Z'),
  },
  runCreated('r-3', 'c-2'),
  taskCreated('task-2', 'c-2'),
  {
    type: 'TaskCancelled',
    data: { uid: 'task-2', from: 'TRIAGE', run_id: 'r-3' },
    metadata: metadata('2026-01-04T00:00:00.000Z'),
  },
  { type: 'TaskDeleted', data: { uid: 'task-2', conversation_id: 'c-2' } },
  taskCreated('task-3', 'c-2', '2026-01-05T00:00:00.000Z'),
]);

describe('tasks projection', () => {
  it('keeps live tasks with their updates and the newest root run of their conversation', async () => {
    const docs = await project(tasksProjection, history);
    expect(docs['task-1']).toEqual({
      uid: 'task-1',
      factory_uid: 'f-1',
      team_uid: 't-1',
      conversation_id: 'c-1',
      run_id: 'r-1',
      title: 'Fix the build',
      description: 'CI is red',
      stage: 'SPEC',
      author_type: 'user',
      author_uid: 'u-1',
      ticket_id: 'PAY-1',
      ticket_source: 'linear',
      author: null,
      current_run: { run_id: 'r-2', state: 'QUEUED', is_run_type_cancellable: true },
      outputs: [],
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-03T00:00:00.000Z',
    });
  });

  it('drops a deleted task and lets a new one bind its conversation', async () => {
    const docs = await project(tasksProjection, history);
    expect(docs['task-2']).toBeUndefined();
    expect(docs['task-3']).toMatchObject({ conversation_id: 'c-2', current_run: { run_id: 'r-3' }, stage: 'TRIAGE' });
    expect(docs['conversations/c-2']).toMatchObject({ latest_root_run_id: 'r-3', task_uid: 'task-3' });
    expect(docs['conversations/c-1']).toMatchObject({ latest_root_run_id: 'r-2', task_uid: 'task-1' });
    // Sub-runs never become a conversation's current run.
    expect(docs['conversations/c-other']).toBeUndefined();
  });

  it('gives the same documents applied twice, and in any batch size', async () => {
    for (const events of [history, resolved]) {
      const once = await project(tasksProjection, events);
      expect(await project(tasksProjection, events, { times: 2 })).toEqual(once);
      expect(await project(tasksProjection, events, { batchSize: 1 })).toEqual(once);
      expect(await project(tasksProjection, events, { batchSize: 3 })).toEqual(once);
    }
  });

  it("resolves author, the current run's state and the run tree's outputs into the task's one document", async () => {
    const docs = await project(tasksProjection, resolved);
    expect(docs['task-r']).toMatchObject({
      author: { type: 'service_account', uid: 'agent-1', display_name: 'Foreman 2', email: null, photo_url: null },
      current_run: { run_id: 'r-b', state: 'FAILED', is_run_type_cancellable: true },
    });
    // Newest first: the sub-run's PR (another conversation, in the tree), then the root's file;
    // the PLAN is no output, and the same artifact recorded twice counts once.
    expect(docs['task-r']!.outputs).toEqual([
      {
        artifact_type: 'PULL_REQUEST',
        created_at: '2026-02-01T00:03:00.000Z',
        data: { artifact_uid: 'a-pr', url: 'https://github.com/o/r/pull/1' },
        in_conversation: false,
      },
      {
        artifact_type: 'FILE',
        created_at: '2026-02-01T00:01:00.000Z',
        data: { artifact_uid: 'a-file', filename: 'out.txt' },
        in_conversation: true,
      },
    ]);
    // The author's deletion reaches the task.
    const deleted = await project(
      tasksProjection,
      recorded([
        ...resolved,
        { type: 'AgentIdentityDeleted', data: { uid: 'agent-1', revoked_key_hashes: [] }, metadata: metadata() },
      ]),
    );
    expect(deleted['task-r']!.author).toBeNull();
  });

  it('reaches every task of a prolific author on a rename, past one chunk of 500', async () => {
    const many = Array.from({ length: 1_201 }, (_, i) => [
      runCreated(`run-${i}`, `conv-${i}`),
      {
        ...taskCreated(`t-${i}`, `conv-${i}`),
        data: { ...taskCreated(`t-${i}`, `conv-${i}`).data, author: { type: 'service_account', uid: 'agent-9' } },
      },
    ]).flat();
    const docs = await project(
      tasksProjection,
      recorded([
        ...many,
        {
          type: 'AgentIdentityCreated',
          data: { uid: 'agent-9', team_uid: 't-1', profile: { name: 'Late' } },
          metadata: metadata(),
        },
      ]),
    );
    for (const i of [0, 499, 500, 1_200]) expect(docs[`t-${i}`]!.author).toMatchObject({ display_name: 'Late' });
    expect(docs['principals/agent-9']).toEqual({
      author: expect.objectContaining({ display_name: 'Late' }),
      chunks: 3,
    });
  });
});

const artifactAdded = (run_id: string, minute: number, artifact: Record<string, unknown>) => ({
  type: 'RunArtifactAdded',
  data: { run_id, artifact: { public: false, ...artifact } },
  metadata: metadata(`2026-02-01T00:0${minute}:00.000Z`),
});

/** A task whose author, current run and outputs change after it was created. */
const resolved = recorded([
  {
    type: 'AgentIdentityCreated',
    data: { uid: 'agent-1', team_uid: 't-1', profile: { name: 'Foreman' } },
    metadata: metadata(),
  },
  runCreated('r-a', 'c-r'),
  {
    ...taskCreated('task-r', 'c-r'),
    data: { ...taskCreated('task-r', 'c-r').data, author: { type: 'service_account', uid: 'agent-1' } },
  },
  artifactAdded('r-a', 1, { artifact_uid: 'a-file', artifact_type: 'FILE', filename: 'out.txt', blob: 'sha' }),
  artifactAdded('r-a', 1, { artifact_uid: 'a-file', artifact_type: 'FILE', filename: 'out.txt', blob: 'sha' }),
  artifactAdded('r-a', 2, { artifact_uid: 'a-plan', artifact_type: 'PLAN', content: '# plan' }),
  runCreated('r-a-sub', 'c-sub', 'r-a'),
  artifactAdded('r-a-sub', 3, {
    artifact_uid: 'a-pr',
    artifact_type: 'PULL_REQUEST',
    url: 'https://github.com/o/r/pull/1',
  }),
  runCreated('r-b', 'c-r'),
  {
    type: 'RunLeased',
    data: { run_id: 'r-b', worker_id: 'w', execution_id: 'x', lease_expires_at: '2026-02-02T00:00:00.000Z' },
    metadata: metadata(),
  },
  {
    type: 'RunFinished',
    data: { run_id: 'r-b', execution_id: 'x', state: 'FAILED', status_message: null },
    metadata: metadata(),
  },
  // A finished sub-run and an older root run change nothing of the task's current run.
  {
    type: 'RunFinished',
    data: { run_id: 'r-a', execution_id: 'y', state: 'SUCCEEDED', status_message: null },
    metadata: metadata(),
  },
  { type: 'AgentIdentityUpdated', data: { uid: 'agent-1', changes: { name: 'Foreman 2' } }, metadata: metadata() },
]);
