/** Users with their memberships, in the order they joined (the first is the default team). */
import { projection } from '../../src/projector/projection.js';
import type { TeamEvent, Role } from '../../commands/team/events.js';
import type { UserEvent } from '../../commands/user/events.js';

export interface UserDoc {
  [field: string]: unknown;
  uid: string;
  email: string;
  display_name: string;
  memberships: Array<{ team_uid: string; role: Role }>;
  created_at: string;
}

export const usersProjection = projection<UserEvent | TeamEvent, UserDoc>({
  name: 'users',
  version: 1,
  indexes: [['email']],
  on: {
    // A membership may be recorded before its user (bootstrap creates the team first): the
    // membership then waits on a partial document that the registration completes.
    UserRegistered: async (e, docs) => {
      const early = (await docs.get(e.data.uid)) as Partial<UserDoc> | null;
      docs.put(e.data.uid, {
        ...e.data,
        memberships: early?.memberships ?? [],
        created_at: e.metadata.occurred_at,
      } satisfies UserDoc);
    },
    MemberAdded: async (e, docs) => {
      const user = (await docs.get(e.data.user_uid)) as Partial<UserDoc> | null;
      const memberships = user?.memberships ?? [];
      if (memberships.some((m) => m.team_uid === e.data.team_uid)) return;
      // Until its registration, a user seen first through a membership is partial (no email yet).
      docs.put(e.data.user_uid, {
        ...user,
        uid: e.data.user_uid,
        memberships: [...memberships, { team_uid: e.data.team_uid, role: e.data.role }],
      } as UserDoc);
    },
    // The principal cache follows this read model: the user's keys stop opening the team with it.
    MemberRemoved: async (e, docs) => {
      const user = await docs.get(e.data.user_uid);
      if (!user) return;
      docs.patch(e.data.user_uid, { memberships: user.memberships.filter((m) => m.team_uid !== e.data.team_uid) });
    },
  },
});
