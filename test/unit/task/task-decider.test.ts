import { describe, it } from 'vitest';
import { taskDecider } from '../../../commands/task/task-decider.js';
import type { TaskCreatedData, TaskEvent } from '../../../commands/task/events.js';
import { Conflict, NotFound } from '../../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../../helpers/decider-spec.js';

const spec = deciderSpec(taskDecider);
const data: TaskCreatedData = {
  uid: 'task-1',
  factory_uid: 'f-1',
  team_uid: 't-1',
  conversation_id: 'c-1',
  run_id: 'r-1',
  title: 'Fix the build',
  description: null,
  stage: 'TRIAGE',
  author: { type: 'user', uid: 'u-1' },
  ticket_id: 'PAY-1',
  ticket_source: 'linear',
};
const created: TaskEvent = { type: 'TaskCreated', data };
const deleted: TaskEvent = { type: 'TaskDeleted', data: { uid: 'task-1', conversation_id: 'c-1' } };
const update = (
  fields: { title?: string; description?: string | null; stage?: TaskCreatedData['stage'] },
  factory_uid = 'f-1',
) => ({ type: 'UpdateTask', data: { uid: 'task-1', factory_uid, ...fields } }) as const;

describe('task decider', () => {
  it('creates a task', () =>
    spec
      .given([])
      .when({ type: 'CreateTask', data })
      .then([{ type: 'TaskCreated', data: { uid: 'task-1', stage: 'TRIAGE' } }]));

  it('refuses to create the same task twice', () =>
    spec.given([created]).when({ type: 'CreateTask', data }).thenThrows(Conflict));

  it('records only the fields that change', () =>
    spec
      .given([created])
      .when(update({ title: 'Fix the build', description: 'CI is red' }))
      .then([{ type: 'TaskUpdated', data: { uid: 'task-1', changes: { description: 'CI is red' } } }]));

  it('moves to any stage, backwards too', () => {
    spec
      .given([created])
      .when(update({ stage: 'COMPLETE' }))
      .then([{ type: 'TaskStageChanged', data: { from: 'TRIAGE', to: 'COMPLETE' } }]);
    spec
      .given([created, { type: 'TaskStageChanged', data: { uid: 'task-1', from: 'TRIAGE', to: 'COMPLETE' } }])
      .when(update({ stage: 'SPEC' }))
      .then([{ type: 'TaskStageChanged', data: { from: 'COMPLETE', to: 'SPEC' } }]);
    spec
      .given([created, { type: 'TaskCancelled', data: { uid: 'task-1', from: 'TRIAGE', run_id: 'r-1' } }])
      .when(update({ stage: 'IMPLEMENT' }))
      .then([{ type: 'TaskStageChanged', data: { from: 'CANCELLED', to: 'IMPLEMENT' } }]);
  });

  it('changes title and stage in one decision', () =>
    spec
      .given([created])
      .when(update({ title: 'New', stage: 'REVIEW' }))
      .then([
        { type: 'TaskUpdated', data: { changes: { title: 'New' } } },
        { type: 'TaskStageChanged', data: { to: 'REVIEW' } },
      ]));

  it('treats an update that changes nothing as a valid no-op', () =>
    spec
      .given([created])
      .when(update({ title: 'Fix the build', stage: 'TRIAGE' }))
      .thenNothingHappened());

  it('cancels: stage CANCELLED, naming the run whose tree is cancelled', () =>
    spec
      .given([created])
      .when({ type: 'CancelTask', data: { uid: 'task-1', factory_uid: 'f-1', run_id: 'r-2' } })
      .then([{ type: 'TaskCancelled', data: { uid: 'task-1', from: 'TRIAGE', run_id: 'r-2' } }]));

  it('deletes, with the conversation to release', () =>
    spec
      .given([created])
      .when({ type: 'DeleteTask', data: { uid: 'task-1', factory_uid: 'f-1' } })
      .then([{ type: 'TaskDeleted', data: { conversation_id: 'c-1' } }]));

  it('answers not found for a deleted task, under another factory, or to another team', () => {
    spec
      .given([created, deleted])
      .when(update({ title: 'x' }))
      .thenThrows(NotFound);
    spec
      .given([created, deleted])
      .when({ type: 'DeleteTask', data: { uid: 'task-1', factory_uid: 'f-1' } })
      .thenThrows(NotFound);
    spec
      .given([created])
      .when(update({ title: 'x' }, 'f-2'))
      .thenThrows(NotFound);
    spec
      .given([created])
      .when(
        { type: 'CancelTask', data: { uid: 'task-1', factory_uid: 'f-1', run_id: 'r-1' } },
        userContext('u-9', { 't-9': 'admin' }),
      )
      .thenThrows(NotFound);
    spec
      .given([])
      .when(update({ title: 'x' }))
      .thenThrows(NotFound);
  });
});
