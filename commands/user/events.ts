/** Recorded on the stream of the principal that the key opens. */
export type ApiKeyIssued = {
  type: 'ApiKeyIssued';
  data: { key_id: string; key_hash: string; principal: { type: 'user' | 'agent'; uid: string } };
};

/**
 * A team admin added the user to a team. Recorded whether the user is new or not, so the answer
 * is the same; only the invitation that can give a keyless account its first key is worth anything.
 */
type InvitationIssued = {
  type: 'InvitationIssued';
  data: { uid: string; team_uid: string; invitation_hash: string };
};
type InvitationRedeemed = { type: 'InvitationRedeemed'; data: { uid: string; invitation_hash: string } };

export type UserEvent =
  | { type: 'UserRegistered'; data: { uid: string; email: string; display_name: string } }
  | ApiKeyIssued
  | InvitationIssued
  | InvitationRedeemed;

/** Reserves an email address for one user: appended with no_stream, so the first one wins. */
export type EmailReserved = { type: 'EmailReserved'; data: { email: string; user_uid: string } };

export const userStream = (uid: string) => `user-${uid}`;
