import type { Decider } from '../../src/kernel/decider.js';
import { Conflict, Forbidden, NotFound } from '../../src/kernel/errors.js';
import type { Role, TeamEvent } from './events.js';
import { own, ownsKey } from '../../src/own-keys.js';

export type TeamCommand =
  | { type: 'CreateTeam'; data: { uid: string; name: string; admin_uid: string } }
  | { type: 'AddMember'; data: { team_uid: string; user_uid: string; role: Role } }
  | { type: 'RemoveMember'; data: { team_uid: string; user_uid: string } };

export type TeamState =
  | { status: 'none' }
  | { status: 'live'; uid: string; name: string; members: Record<string, Role> };

/** Who may add people: an admin of the team, or the system (bootstrap). */
export function assertCanManage(
  state: TeamState,
  actor: { type: string; uid: string },
  teamUid: string,
): asserts state is Extract<TeamState, { status: 'live' }> {
  if (state.status !== 'live') throw new NotFound('team', teamUid);
  if (actor.type === 'system') return;
  const role = own(state.members, actor.uid);
  if (!role) throw new NotFound('team', teamUid);
  if (role !== 'admin') throw new Forbidden('only team admins can add members');
}

export const teamDecider: Decider<TeamCommand, TeamEvent, TeamState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    switch (event.type) {
      case 'TeamCreated':
        return { status: 'live', uid: event.data.uid, name: event.data.name, members: {} };
      case 'MemberAdded':
        return state.status === 'live'
          ? { ...state, members: { ...state.members, [event.data.user_uid]: event.data.role } }
          : state;
      case 'MemberRemoved': {
        if (state.status !== 'live') return state;
        const { [event.data.user_uid]: _removed, ...members } = state.members;
        return { ...state, members };
      }
    }
  },

  decide: (command, state, context) => {
    switch (command.type) {
      case 'CreateTeam': {
        if (state.status !== 'none') throw new Conflict(`team ${command.data.uid} exists`);
        const { uid, name, admin_uid } = command.data;
        return [
          { type: 'TeamCreated', data: { uid, name } },
          { type: 'MemberAdded', data: { team_uid: uid, user_uid: admin_uid, role: 'admin' } },
        ];
      }
      case 'AddMember': {
        assertCanManage(state, context.actor, command.data.team_uid);
        if (ownsKey(state.members, command.data.user_uid))
          throw new Conflict('the user is already a member of this team', 'already_member');
        return [{ type: 'MemberAdded', data: command.data }];
      }
      case 'RemoveMember': {
        const { team_uid, user_uid } = command.data;
        if (state.status !== 'live') throw new NotFound('team', team_uid);
        const actorRole = own(state.members, context.actor.uid);
        if (!actorRole) throw new NotFound('team', team_uid);
        // Anyone may leave; only admins remove others.
        if (user_uid !== context.actor.uid && actorRole !== 'admin')
          throw new Forbidden('only team admins can remove members');
        const role = own(state.members, user_uid);

        if (!role) throw new NotFound('member', user_uid);
        // A team without an admin could never be managed again.
        const admins = Object.values(state.members).filter((r) => r === 'admin').length;
        if (role === 'admin' && admins === 1)
          throw new Conflict('the last admin of a team cannot be removed: add another admin first', 'last_admin');
        return [{ type: 'MemberRemoved', data: { team_uid, user_uid, role } }];
      }
    }
  },
};
