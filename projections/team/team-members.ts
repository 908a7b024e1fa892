/** The members of every team, one document per membership, for GET /teams/{team_uid}/members. */
import { positionKey } from '../../src/eventstore/port.js';
import { projection } from '../../src/projector/projection.js';
import type { Role, TeamEvent } from '../../commands/team/events.js';

export interface TeamMemberDoc {
  [field: string]: unknown;
  team_uid: string;
  user_uid: string;
  role: Role;
  joined_at: string;
  /** The MemberAdded event's log position as sortable text: the order they joined, ties and all. */
  order: string;
  /** Who added them (the bootstrap, for the first admin; the user, for a team's creator). */
  added_by: { type: 'user' | 'agent' | 'system'; uid: string };
}

const memberId = (team_uid: string, user_uid: string) => `${team_uid}:${user_uid}`;

export const teamMembersProjection = projection<TeamEvent, TeamMemberDoc>({
  name: 'team_members',
  version: 1,
  indexes: [['team_uid', 'order']],
  on: {
    MemberAdded: (e, docs) =>
      docs.put(memberId(e.data.team_uid, e.data.user_uid), {
        ...e.data,
        joined_at: e.metadata.occurred_at,
        order: positionKey(e.position),
        added_by: e.metadata.actor,
      } satisfies TeamMemberDoc),
    MemberRemoved: (e, docs) => docs.delete(memberId(e.data.team_uid, e.data.user_uid)),
  },
});
