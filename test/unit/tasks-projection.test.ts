import { describe, expect, it } from 'vitest';
import type { RunCreatedData } from '../../commands/run/events.js';
import { tasksProjection } from '../../projections/tasks.js';
import { metadata, project, recorded } from '../helpers/projection-spec.js';

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
      current_run_id: 'r-2',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-03T00:00:00.000Z',
    });
  });

  it('drops a deleted task and lets a new one bind its conversation', async () => {
    const docs = await project(tasksProjection, history);
    expect(docs['task-2']).toBeUndefined();
    expect(docs['task-3']).toMatchObject({ conversation_id: 'c-2', current_run_id: 'r-3', stage: 'TRIAGE' });
    expect(docs['conversations/c-2']).toEqual({ latest_root_run_id: 'r-3', task_uid: 'task-3' });
    expect(docs['conversations/c-1']).toEqual({ latest_root_run_id: 'r-2', task_uid: 'task-1' });
    // Sub-runs never become a conversation's current run.
    expect(docs['conversations/c-other']).toBeUndefined();
  });

  it('gives the same documents applied twice, and in any batch size', async () => {
    const once = await project(tasksProjection, history);
    expect(await project(tasksProjection, history, { times: 2 })).toEqual(once);
    expect(await project(tasksProjection, history, { batchSize: 1 })).toEqual(once);
    expect(await project(tasksProjection, history, { batchSize: 3 })).toEqual(once);
  });
});
