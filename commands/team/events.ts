export const ROLES = ['admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

export type TeamEvent =
  | { type: 'TeamCreated'; data: { uid: string; name: string } }
  | { type: 'MemberAdded'; data: { team_uid: string; user_uid: string; role: Role } }
  /** Removed by an admin, or left (the actor is the member): the user's keys stop opening the team. */
  | { type: 'MemberRemoved'; data: { team_uid: string; user_uid: string; role: Role } };

export const teamStream = (uid: string) => `team-${uid}`;
