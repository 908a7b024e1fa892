import type { Decider } from '../../src/kernel/decider.js';
import { Conflict, Forbidden, NotFound } from '../../src/kernel/errors.js';
import type { TeamSecretEvent } from './events.js';
import { ownsKey, putOwn } from '../../src/own-keys.js';

export type TeamSecretCommand =
  | { type: 'CreateTeamSecret'; data: { team_uid: string; name: string; sealed: string } }
  | { type: 'DeleteTeamSecret'; data: { team_uid: string; name: string } };

export type TeamSecretsState = { secrets: Record<string, { sealed: string; created_at: string }> };

const MAX_SECRETS_PER_TEAM = 200;

export const teamSecretsDecider: Decider<TeamSecretCommand, TeamSecretEvent, TeamSecretsState> = {
  initialState: () => ({ secrets: {} }),

  evolve: (state, event) => {
    const secrets = { ...state.secrets };
    if (event.type === 'TeamSecretCreated')
      putOwn(secrets, event.data.name, { sealed: event.data.sealed, created_at: event.data.created_at });
    else delete secrets[event.data.name];
    return { secrets };
  },

  decide: (command, state, context) => {
    if (context.actor.type !== 'user' || !ownsKey(context.teams, command.data.team_uid))
      throw new Forbidden('only members of the team manage its secrets');
    switch (command.type) {
      case 'CreateTeamSecret':
        if (ownsKey(state.secrets, command.data.name))
          throw new Conflict(`secret ${command.data.name} exists; delete it first`);
        if (Object.keys(state.secrets).length >= MAX_SECRETS_PER_TEAM)
          throw new Conflict(`a team has at most ${MAX_SECRETS_PER_TEAM} secrets`, 'limit_exceeded');
        return [{ type: 'TeamSecretCreated', data: { ...command.data, created_at: context.now } }];
      case 'DeleteTeamSecret':
        if (!ownsKey(state.secrets, command.data.name)) throw new NotFound('secret', command.data.name);

        return [{ type: 'TeamSecretDeleted', data: command.data }];
    }
  },
};
