/** Recorded on the stream of the principal that the key opens. */
export type ApiKeyIssued = {
  type: 'ApiKeyIssued';
  data: { key_id: string; key_hash: string; principal: { type: 'user' | 'agent'; uid: string } };
};

export type UserEvent =
  | { type: 'UserRegistered'; data: { uid: string; email: string; display_name: string } }
  | ApiKeyIssued;

/** Reserves an email address for one user: appended with no_stream, so the first one wins. */
export type EmailReserved = { type: 'EmailReserved'; data: { email: string; user_uid: string } };

export const userStream = (uid: string) => `user-${uid}`;
