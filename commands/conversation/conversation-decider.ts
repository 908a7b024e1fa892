import type { Decider } from '../../src/kernel/decider.js';
import { Conflict, InvalidRequest } from '../../src/kernel/errors.js';
import type { ConversationEvent } from './events.js';

export type ConversationCommand =
  | { type: 'AddRun'; data: { conversation_id: string; run_id: string; team_uid: string | null; creator_uid: string } }
  | {
      type: 'BindTask';
      data: {
        conversation_id: string;
        task_uid: string;
        factory_uid: string;
        factory_team_uid: string;
        /** The bound task, when its own stream says it was deleted: its binding is released first. */
        deleted_task_uid?: string | null;
      };
    }
  | { type: 'ReleaseTask'; data: { conversation_id: string; task_uid: string } };

export type ConversationState = {
  runs: Array<{ run_id: string; team_uid: string | null; creator_uid: string }>;
  task: { task_uid: string; factory_uid: string } | null;
};

export const conversationDecider: Decider<ConversationCommand, ConversationEvent, ConversationState> = {
  initialState: () => ({ runs: [], task: null }),

  evolve: (state, event) => {
    switch (event.type) {
      case 'ConversationRunAdded':
        return {
          ...state,
          runs: [
            ...state.runs,
            { run_id: event.data.run_id, team_uid: event.data.team_uid, creator_uid: event.data.creator_uid },
          ],
        };
      case 'ConversationTaskBound':
        return { ...state, task: { task_uid: event.data.task_uid, factory_uid: event.data.factory_uid } };
      case 'ConversationTaskReleased':
        return state.task?.task_uid === event.data.task_uid ? { ...state, task: null } : state;
    }
  },

  decide: (command, state) => {
    switch (command.type) {
      case 'AddRun':
        return state.runs.some((r) => r.run_id === command.data.run_id)
          ? []
          : [{ type: 'ConversationRunAdded', data: command.data }];
      case 'BindTask': {
        const { conversation_id, task_uid, factory_uid, factory_team_uid, deleted_task_uid } = command.data;
        // Binding the same task again (a replayed reaction) changes nothing.
        if (state.task?.task_uid === task_uid) return [];
        const latest = state.runs.at(-1);
        if (!latest || latest.team_uid !== factory_team_uid) {
          throw new InvalidRequest(
            `conversation ${conversation_id}: its most recent run is not owned by the factory's team`,
            [
              {
                path: 'body.conversation_id',
                message: 'unknown conversation, or its latest run belongs to another team',
              },
            ],
          );
        }
        const bound: ConversationEvent = {
          type: 'ConversationTaskBound',
          data: { conversation_id, task_uid, factory_uid },
        };
        if (!state.task) return [bound];
        // A delete that stopped before releasing its conversation must not keep it bound forever.
        if (state.task.task_uid === deleted_task_uid) {
          return [{ type: 'ConversationTaskReleased', data: { conversation_id, task_uid: deleted_task_uid } }, bound];
        }
        throw new Conflict(`conversation ${conversation_id} is already bound to a live task`, 'conversation_bound');
      }
      case 'ReleaseTask':
        return state.task?.task_uid === command.data.task_uid
          ? [{ type: 'ConversationTaskReleased', data: command.data }]
          : [];
    }
  },
};
