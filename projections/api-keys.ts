/** API key hash → the principal it opens. Deleting an agent revokes all its keys at once. */
import { projection } from '../src/projector/projection.js';
import type { IdentityEvent } from '../commands/identity/events.js';
import type { UserEvent } from '../commands/user/events.js';

export interface ApiKeyDoc {
  [field: string]: unknown;
  key_id: string;
  principal_type: 'user' | 'agent';
  principal_uid: string;
  created_at: string;
}

export const apiKeysProjection = projection<UserEvent | IdentityEvent, ApiKeyDoc>({
  name: 'api_keys',
  version: 1,
  indexes: [['principal_uid']],
  on: {
    ApiKeyIssued: (e, docs) =>
      docs.put(e.data.key_hash, {
        key_id: e.data.key_id,
        principal_type: e.data.principal.type,
        principal_uid: e.data.principal.uid,
        created_at: e.metadata.occurred_at,
      } satisfies ApiKeyDoc),
    AgentIdentityDeleted: (e, docs) => {
      for (const hash of e.data.revoked_key_hashes) docs.delete(hash);
    },
  },
});
