import { describe, it } from 'vitest';
import { conversationDecider } from '../../../commands/conversation/conversation-decider.js';
import type { ConversationEvent } from '../../../commands/conversation/events.js';
import { Conflict, InvalidRequest } from '../../../src/kernel/errors.js';
import { deciderSpec } from '../../helpers/decider-spec.js';

const spec = deciderSpec(conversationDecider);
const run = (run_id: string, team_uid: string | null = 't-1'): ConversationEvent => ({
  type: 'ConversationRunAdded',
  data: { conversation_id: 'c-1', run_id, team_uid, creator_uid: 'u-1' },
});
const bound = (task_uid: string): ConversationEvent => ({
  type: 'ConversationTaskBound',
  data: { conversation_id: 'c-1', task_uid, factory_uid: 'f-1' },
});
const released = (task_uid: string): ConversationEvent => ({
  type: 'ConversationTaskReleased',
  data: { conversation_id: 'c-1', task_uid },
});
const bind = (task_uid: string, deleted_task_uid: string | null = null, factory_team_uid = 't-1') =>
  ({
    type: 'BindTask',
    data: { conversation_id: 'c-1', task_uid, factory_uid: 'f-2', factory_team_uid, deleted_task_uid },
  }) as const;

describe('conversation decider', () => {
  it('adds each run once', () => {
    spec
      .given([])
      .when({ type: 'AddRun', data: { conversation_id: 'c-1', run_id: 'r-1', team_uid: 't-1', creator_uid: 'u-1' } })
      .then([{ type: 'ConversationRunAdded' }]);
    spec
      .given([run('r-1')])
      .when({ type: 'AddRun', data: { conversation_id: 'c-1', run_id: 'r-1', team_uid: 't-1', creator_uid: 'u-1' } })
      .thenNothingHappened();
  });

  it('binds a task when the most recent run is owned by the factory’s team', () =>
    spec
      .given([run('r-1', 't-9'), run('r-2')])
      .when(bind('task-1'))
      .then([{ type: 'ConversationTaskBound', data: { task_uid: 'task-1', factory_uid: 'f-2' } }]));

  it('refuses an unknown conversation, and one whose latest run is another team’s or personal', () => {
    spec.given([]).when(bind('task-1')).thenThrows(InvalidRequest);
    spec
      .given([run('r-1'), run('r-2', 't-9')])
      .when(bind('task-1'))
      .thenThrows(InvalidRequest);
    spec
      .given([run('r-1'), run('r-2', null)])
      .when(bind('task-1'))
      .thenThrows(InvalidRequest);
    spec
      .given([run('r-1')])
      .when(bind('task-1', null, 't-2'))
      .thenThrows(InvalidRequest);
  });

  it('keeps one live task per conversation', () =>
    spec
      .given([run('r-1'), bound('task-1')])
      .when(bind('task-2'))
      .thenThrows(Conflict, /already bound/));

  it('binds the same task again as a no-op (a replayed reaction)', () =>
    spec
      .given([run('r-1'), bound('task-1')])
      .when(bind('task-1'))
      .thenNothingHappened());

  it('binds again once the task is released', () =>
    spec
      .given([run('r-1'), bound('task-1'), released('task-1')])
      .when(bind('task-2'))
      .then([{ type: 'ConversationTaskBound' }]));

  it('takes over the binding of a task that was deleted without releasing it', () =>
    spec
      .given([run('r-1'), bound('task-1')])
      .when(bind('task-2', 'task-1'))
      .then([
        { type: 'ConversationTaskReleased', data: { task_uid: 'task-1' } },
        { type: 'ConversationTaskBound', data: { task_uid: 'task-2' } },
      ]));

  it('does not take over a live binding named as deleted by mistake', () =>
    spec
      .given([run('r-1'), bound('task-3')])
      .when(bind('task-2', 'task-1'))
      .thenThrows(Conflict));

  it('releases only the task that is bound', () => {
    spec
      .given([run('r-1'), bound('task-1')])
      .when({ type: 'ReleaseTask', data: { conversation_id: 'c-1', task_uid: 'task-1' } })
      .then([{ type: 'ConversationTaskReleased' }]);
    spec
      .given([run('r-1'), bound('task-1')])
      .when({ type: 'ReleaseTask', data: { conversation_id: 'c-1', task_uid: 'task-9' } })
      .thenNothingHappened();
  });
});
