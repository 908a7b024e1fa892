/**
 * API key hash → the principal it opens, and what its holder may be shown of it. A revoked key's
 * document goes, and so do all of an agent's with the agent. Version 2 keeps label, last four
 * characters, expiry and creator.
 */
import { projection } from '../../src/projector/projection.js';
import type { IdentityEvent } from '../../commands/identity/events.js';
import type { UserEvent } from '../../commands/user/events.js';

export interface ApiKeyDoc {
  [field: string]: unknown;
  key_id: string;
  principal_type: 'user' | 'agent';
  principal_uid: string;
  label: string | null;
  last4: string | null;
  expires_at: string | null;
  created_at: string;
  created_by: { type: 'user' | 'agent' | 'system'; uid: string };
}

export const apiKeysProjection = projection<UserEvent | IdentityEvent, ApiKeyDoc>({
  name: 'api_keys',
  version: 2,
  indexes: [['principal_uid', 'created_at']],
  on: {
    ApiKeyIssued: (e, docs) =>
      docs.put(e.data.key_hash, {
        key_id: e.data.key_id,
        principal_type: e.data.principal.type,
        principal_uid: e.data.principal.uid,
        label: e.data.label ?? null,
        last4: e.data.last4 ?? null,
        expires_at: e.data.expires_at ?? null,
        created_at: e.metadata.occurred_at,
        created_by: e.metadata.actor,
      } satisfies ApiKeyDoc),
    ApiKeyRevoked: (e, docs) => docs.delete(e.data.key_hash),
    AgentIdentityDeleted: (e, docs) => {
      for (const hash of e.data.revoked_key_hashes) docs.delete(hash);
    },
  },
});
