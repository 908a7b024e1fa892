import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import { Conflict, NotFound } from '../../src/kernel/errors.js';
import type { Stage, TaskCreatedData, TaskEvent } from './events.js';
import { ownsKey } from '../../src/own-keys.js';

export type TaskCommand =
  | { type: 'CreateTask'; data: TaskCreatedData }
  | {
      type: 'UpdateTask';
      data: { uid: string; factory_uid: string; title?: string; description?: string | null; stage?: Stage };
    }
  | { type: 'CancelTask'; data: { uid: string; factory_uid: string; run_id: string } }
  | { type: 'DeleteTask'; data: { uid: string; factory_uid: string } };

export type TaskState = { status: 'none' } | { status: 'deleted' } | ({ status: 'live' } & TaskCreatedData);

export type LiveTask = Extract<TaskState, { status: 'live' }>;

/** A task exists for a caller only under its own factory and in one of the caller's teams. */
export function live(
  state: TaskState,
  uid: string,
  factoryUid: string,
  context: Pick<DecideContext, 'teams'>,
): LiveTask {
  if (state.status !== 'live' || state.factory_uid !== factoryUid || !ownsKey(context.teams, state.team_uid))
    throw new NotFound('task', uid);
  return state;
}

export const taskDecider: Decider<TaskCommand, TaskEvent, TaskState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    switch (event.type) {
      case 'TaskCreated':
        return { status: 'live', ...event.data };
      case 'TaskUpdated':
        return state.status === 'live' ? { ...state, ...event.data.changes } : state;
      case 'TaskStageChanged':
        return state.status === 'live' ? { ...state, stage: event.data.to } : state;
      case 'TaskCancelled':
        return state.status === 'live' ? { ...state, stage: 'CANCELLED' } : state;
      case 'TaskDeleted':
        return { status: 'deleted' };
    }
  },

  decide: (command, state, context) => {
    switch (command.type) {
      case 'CreateTask':
        if (state.status !== 'none') throw new Conflict(`task ${command.data.uid} exists`);
        return [{ type: 'TaskCreated', data: command.data }];
      case 'UpdateTask': {
        const task = live(state, command.data.uid, command.data.factory_uid, context);
        const events: TaskEvent[] = [];
        const changes: { title?: string; description?: string | null } = {};
        if (command.data.title !== undefined && command.data.title !== task.title) changes.title = command.data.title;
        if (command.data.description !== undefined && command.data.description !== task.description)
          changes.description = command.data.description;
        if (Object.keys(changes).length) events.push({ type: 'TaskUpdated', data: { uid: task.uid, changes } });
        // Any stage to any stage, backwards too: last write wins.
        if (command.data.stage !== undefined && command.data.stage !== task.stage) {
          events.push({ type: 'TaskStageChanged', data: { uid: task.uid, from: task.stage, to: command.data.stage } });
        }
        return events;
      }
      case 'CancelTask': {
        const task = live(state, command.data.uid, command.data.factory_uid, context);
        return [{ type: 'TaskCancelled', data: { uid: task.uid, from: task.stage, run_id: command.data.run_id } }];
      }
      case 'DeleteTask': {
        const task = live(state, command.data.uid, command.data.factory_uid, context);
        return [{ type: 'TaskDeleted', data: { uid: task.uid, conversation_id: task.conversation_id } }];
      }
    }
  },
};
