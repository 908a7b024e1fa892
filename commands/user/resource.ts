/** An API key as the API shows it: never the key (but once, when created), nor its hash. */
import { z } from 'zod';
import type { ApiKeyDoc } from '../../projections/user/api-keys.js';

export const apiKeyResource = z.object({
  key_id: z.string(),
  label: z.string().nullable().describe('The name given to the key when it was created'),
  last4: z
    .string()
    .nullable()
    .describe(
      "The key's last four characters, to tell keys apart; null for keys chosen by the operator or made before",
    ),
  created_at: z.string(),
  created_by: z.object({ type: z.enum(['user', 'agent', 'system']), uid: z.string() }).describe('Who created the key'),
  expires_at: z.string().nullable().describe('When the key stops working (401); null: never'),
});

export const issuedApiKey = apiKeyResource.extend({
  api_key: z.string().describe('The key itself, shown this once: only its SHA-256 hash is kept'),
});

export const apiKeyList = z.object({
  api_keys: z.array(apiKeyResource).describe('The live (not revoked) keys, oldest first; expired ones until revoked'),
});

export const keyIdParam = z.string().min(1).max(128);

export const toApiKeyResource = (doc: ApiKeyDoc): z.infer<typeof apiKeyResource> => ({
  key_id: doc.key_id,
  label: doc.label,
  last4: doc.last4,
  created_at: doc.created_at,
  created_by: doc.created_by,
  expires_at: doc.expires_at,
});
