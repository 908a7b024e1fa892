export const ROLES = ['admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

export type TeamEvent =
  | { type: 'TeamCreated'; data: { uid: string; name: string } }
  | { type: 'MemberAdded'; data: { team_uid: string; user_uid: string; role: Role } };

export const teamStream = (uid: string) => `team-${uid}`;
