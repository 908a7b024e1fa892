import { describe, it } from 'vitest';
import { teamDecider } from '../../../commands/team/team-decider.js';
import type { TeamEvent } from '../../../commands/team/events.js';
import { Conflict, Forbidden, NotFound } from '../../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../../helpers/decider-spec.js';

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

  describe('removing members', () => {
    const remove = (user_uid: string) => ({ type: 'RemoveMember' as const, data: { team_uid: 't-1', user_uid } });
    const admin2: TeamEvent = { type: 'MemberAdded', data: { team_uid: 't-1', user_uid: 'u-3', role: 'admin' } };

    it('lets an admin remove a member, with the role they had', () =>
      spec
        .given([...created, member])
        .when(remove('u-2'))
        .then([{ type: 'MemberRemoved', data: { team_uid: 't-1', user_uid: 'u-2', role: 'member' } }]));

    it('lets a member leave, but not remove anyone else', () => {
      spec
        .given([...created, member])
        .when(remove('u-2'), userContext('u-2'))
        .then([{ type: 'MemberRemoved', data: { user_uid: 'u-2' } }]);
      spec
        .given([...created, member, admin2])
        .when(remove('u-3'), userContext('u-2'))
        .thenThrows(Forbidden);
    });

    it('never removes the last admin, who may go once there is another', () => {
      spec
        .given([...created, member])
        .when(remove('u-1'))
        .thenThrows(Conflict, /last admin/);
      spec
        .given([...created, member, admin2])
        .when(remove('u-1'))
        .then([{ type: 'MemberRemoved', data: { user_uid: 'u-1', role: 'admin' } }]);
      spec
        .given([
          ...created,
          admin2,
          { type: 'MemberRemoved', data: { team_uid: 't-1', user_uid: 'u-3', role: 'admin' } },
        ])
        .when(remove('u-1'))
        .thenThrows(Conflict);
    });

    it('knows no member it does not have, and hides the team from strangers and removed members', () => {
      spec.given(created).when(remove('u-9')).thenThrows(NotFound);
      spec.given(created).when(remove('u-1'), userContext('u-9')).thenThrows(NotFound);
      const left: TeamEvent = { type: 'MemberRemoved', data: { team_uid: 't-1', user_uid: 'u-2', role: 'member' } };
      spec
        .given([...created, member, left])
        .when(remove('u-2'), userContext('u-2'))
        .thenThrows(NotFound);
      spec
        .given([...created, member, left])
        .when(add('u-2'))
        .then([{ type: 'MemberAdded' }]);
    });
  });
});
