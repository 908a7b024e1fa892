/**
 * A key as granted: its id, the hash it is looked up by, and what its holder may be shown of it.
 * `label`, `last4` and `expires_at` are absent on keys issued before they existed: read as null.
 */
export interface KeyGrant {
  key_id: string;
  key_hash: string;
  /** The holder's name for the key ("laptop", "CI"). */
  label?: string | null;
  /** The key's last four characters, so a list can tell keys apart; null when the operator chose the key. */
  last4?: string | null;
  /** When the key stops working; null: never. */
  expires_at?: string | null;
}

type Principal = { type: 'user' | 'agent'; uid: string };

/** Recorded on the stream of the principal that the key opens. */
export type ApiKeyIssued = { type: 'ApiKeyIssued'; data: KeyGrant & { principal: Principal } };

/** The key stops working at once. Recorded on the stream of the principal it opened. */
export type ApiKeyRevoked = {
  type: 'ApiKeyRevoked';
  data: { key_id: string; key_hash: string; principal: Principal };
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
  | ApiKeyRevoked
  | InvitationIssued
  | InvitationRedeemed;

/** Reserves an email address for one user: appended with no_stream, so the first one wins. */
export type EmailReserved = { type: 'EmailReserved'; data: { email: string; user_uid: string } };

export const userStream = (uid: string) => `user-${uid}`;
