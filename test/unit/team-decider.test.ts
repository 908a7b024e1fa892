import { describe, it } from 'vitest';
import { teamDecider } from '../../commands/team/decider.js';
import type { TeamEvent } from '../../commands/team/events.js';
import { Conflict, Forbidden, NotFound } from '../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../helpers/decider-spec.js';

const spec = deciderSpec(teamDecider);
const created: TeamEvent[] = [
  { type: 'TeamCreated', data: { uid: 't-1', name: 'Core' } },
  { type: 'MemberAdded', data: { team_uid: 't-1', user_uid: 'u-1', role: 'admin' } },
];
const member: TeamEvent = { type: 'MemberAdded', data: { team_uid: 't-1', user_uid: 'u-2', role: 'member' } };
const add = (user_uid: string) => ({
  type: 'AddMember' as const,
  data: { team_uid: 't-1', user_uid, role: 'member' as const },
});

describe('team decider', () => {
  it('creates a team with its creator as admin', () =>
    spec
      .given([])
      .when({ type: 'CreateTeam', data: { uid: 't-1', name: 'Core', admin_uid: 'u-1' } })
      .then([
        { type: 'TeamCreated', data: { name: 'Core' } },
        { type: 'MemberAdded', data: { user_uid: 'u-1', role: 'admin' } },
      ]));

  it('lets an admin add a member', () =>
    spec
      .given(created)
      .when(add('u-2'))
      .then([{ type: 'MemberAdded', data: { user_uid: 'u-2' } }]));

  it('refuses a member who is not an admin', () =>
    spec
      .given([...created, member])
      .when(add('u-3'), userContext('u-2'))
      .thenThrows(Forbidden));

  it('hides the team from a stranger', () =>
    spec.given(created).when(add('u-3'), userContext('u-9')).thenThrows(NotFound));

  it('refuses to add someone twice', () =>
    spec
      .given([...created, member])
      .when(add('u-2'))
      .thenThrows(Conflict));

  it('answers not found for a team that does not exist', () => spec.given([]).when(add('u-2')).thenThrows(NotFound));
});
