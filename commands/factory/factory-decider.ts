import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import { Conflict, Forbidden, NotFound } from '../../src/kernel/errors.js';
import type { FactoryEvent, FactoryFields, FactoryState } from './events.js';
import { own, ownsKey } from '../../src/own-keys.js';

export type FactoryCommand =
  | { type: 'CreateFactory'; data: FactoryFields & { uid: string; team_uid: string } }
  | { type: 'UpdateFactory'; data: { uid: string; changes: Partial<FactoryFields> } }
  | { type: 'DeleteFactory'; data: { uid: string } };

/** A factory of a team the caller is not in does not exist for that caller. */
function assertVisible(
  state: FactoryState,
  uid: string,
  context: DecideContext,
): asserts state is Extract<FactoryState, { status: 'live' }> {
  if (state.status !== 'live' || !ownsKey(context.teams, state.team_uid)) throw new NotFound('factory', uid);
}

const assertUser = (context: DecideContext) => {
  if (context.actor.type !== 'user') throw new Forbidden('only users can manage factories');
};

export const factoryDecider: Decider<FactoryCommand, FactoryEvent, FactoryState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    switch (event.type) {
      case 'FactoryCreated':
        return { status: 'live', ...event.data };
      case 'FactoryUpdated':
        return state.status === 'live' ? { ...state, ...event.data.changes } : state;
      case 'FactoryDeleted':
        return state.status === 'live' ? { status: 'deleted', uid: state.uid, team_uid: state.team_uid } : state;
    }
  },

  decide: (command, state, context) => {
    switch (command.type) {
      case 'CreateFactory':
        if (state.status !== 'none') throw new Conflict(`factory ${command.data.uid} exists`);
        if (!ownsKey(context.teams, command.data.team_uid)) throw new Forbidden('not a member of this team');
        assertUser(context);
        return [{ type: 'FactoryCreated', data: command.data }];
      case 'UpdateFactory': {
        assertVisible(state, command.data.uid, context);
        assertUser(context);
        const current: Record<string, unknown> = { ...state };
        const changes = Object.fromEntries(
          Object.entries(command.data.changes).filter(
            ([k, v]) => JSON.stringify(v) !== JSON.stringify(own(current, k)),
          ),
        );
        return Object.keys(changes).length ? [{ type: 'FactoryUpdated', data: { uid: state.uid, changes } }] : [];
      }
      case 'DeleteFactory':
        assertVisible(state, command.data.uid, context);
        assertUser(context);
        return [{ type: 'FactoryDeleted', data: { uid: state.uid } }];
    }
  },
};
