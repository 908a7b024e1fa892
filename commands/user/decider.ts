import type { Decider } from '../../src/kernel/decider.js';
import { Conflict } from '../../src/kernel/errors.js';
import type { UserEvent } from './events.js';

export type UserCommand = {
  type: 'RegisterUser';
  data: { uid: string; email: string; display_name: string; key_id: string; key_hash: string };
};

export type UserState = { status: 'none' } | { status: 'live'; uid: string; email: string; key_ids: string[] };

export const userDecider: Decider<UserCommand, UserEvent, UserState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    switch (event.type) {
      case 'UserRegistered':
        return { status: 'live', uid: event.data.uid, email: event.data.email, key_ids: [] };
      case 'ApiKeyIssued':
        return state.status === 'live' ? { ...state, key_ids: [...state.key_ids, event.data.key_id] } : state;
    }
  },

  decide: (command, state) => {
    switch (command.type) {
      case 'RegisterUser': {
        if (state.status !== 'none') throw new Conflict(`user ${command.data.uid} exists`);
        const { uid, email, display_name, key_id, key_hash } = command.data;
        return [
          { type: 'UserRegistered', data: { uid, email, display_name } },
          { type: 'ApiKeyIssued', data: { key_id, key_hash, principal: { type: 'user', uid } } },
        ];
      }
    }
  },
};
