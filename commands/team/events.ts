export type Role = 'admin' | 'member';

export type TeamEvent =
  | { type: 'TeamCreated'; data: { uid: string; name: string } }
  | { type: 'MemberAdded'; data: { team_uid: string; user_uid: string; role: Role } };

export const teamStream = (uid: string) => `team-${uid}`;
