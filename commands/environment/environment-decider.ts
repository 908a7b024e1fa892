/** Environments belong to a team; its members create, change and delete them. */
import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import { Conflict, Forbidden, InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import type { EnvironmentConfig, EnvironmentEvent } from './events.js';
import { ownsKey } from '../../src/own-keys.js';

export type EnvironmentCommand =
  | { type: 'CreateEnvironment'; data: { id: string; team_uid: string; config: EnvironmentConfig } }
  | { type: 'UpdateEnvironment'; data: { id: string; config: EnvironmentConfig } }
  | { type: 'DeleteEnvironment'; data: { id: string } };

export type EnvironmentState =
  | { status: 'none' }
  | { status: 'deleted' }
  | { status: 'live'; id: string; team_uid: string; config: EnvironmentConfig };

/** A live environment of one of the caller's teams, or 404. */
export function visibleEnvironment(state: EnvironmentState, id: string, context: Pick<DecideContext, 'teams'>) {
  if (state.status !== 'live' || !ownsKey(context.teams, state.team_uid)) throw new NotFound('environment', id);
  return state;
}

/** A run or schedule may name only a live environment of the team that executes it. */
export function assertUsableEnvironment(
  state: EnvironmentState,
  teamUid: string,
  id: string | undefined,
  path: string,
) {
  if (id === undefined) return;
  if (state.status !== 'live' || state.team_uid !== teamUid) {
    const message = `no environment ${id} in the team (GET /agent/environments lists them)`;
    throw new InvalidRequest(message, [{ path, message }]);
  }
}

export const environmentDecider: Decider<EnvironmentCommand, EnvironmentEvent, EnvironmentState> = {
  initialState: () => ({ status: 'none' }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'EnvironmentCreated':
        return { status: 'live', ...event.data };
      case 'EnvironmentUpdated':
        return state.status === 'live' ? { ...state, config: event.data.config } : state;
      case 'EnvironmentDeleted':
        return { status: 'deleted' };
    }
  },
  decide: (command, state, context) => {
    if (command.type === 'CreateEnvironment') {
      if (state.status !== 'none') throw new Conflict(`environment ${command.data.id} exists`);
      if (!ownsKey(context.teams, command.data.team_uid)) throw new Forbidden('not a member of this team');
      return [{ type: 'EnvironmentCreated', data: command.data }];
    }
    const env = visibleEnvironment(state, command.data.id, context);
    if (command.type === 'DeleteEnvironment') return [{ type: 'EnvironmentDeleted', data: { id: env.id } }];
    return JSON.stringify(command.data.config) === JSON.stringify(env.config)
      ? []
      : [{ type: 'EnvironmentUpdated', data: { id: env.id, config: command.data.config } }];
  },
};
