/** The agent identity as the API answers it. */
import type { IdentityDoc } from '../../projections/identities.js';

/** The hosted service's named-agent shape, with its defaults for fields never set. */
export const toIdentityResource = (doc: IdentityDoc) => ({
  description: null,
  prompt: null,
  base_model: null,
  environment_id: null,
  worker_host: null,
  credential_strategy: null,
  skills: [],
  secrets: [],
  memory: { attached_stores: [], auto_memory: { enabled: true } },
  ...doc,
  available: true,
});
