/** Managed team secrets: named values, sealed before they reach an event. One stream per team. */
export type TeamSecretEvent =
  | { type: 'TeamSecretCreated'; data: { team_uid: string; name: string; sealed: string; created_at: string } }
  | { type: 'TeamSecretDeleted'; data: { team_uid: string; name: string } };

export const teamSecretsStream = (teamUid: string) => `teamsecrets-${teamUid}`;
