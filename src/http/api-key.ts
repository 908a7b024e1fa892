/**
 * API keys: 32 random bytes, shown once. Only a SHA-256 hash is stored; for a secret this
 * random a fast hash is enough (nothing to brute-force), and a lookup by hash is one read.
 */
import { createHash, randomBytes } from 'node:crypto';

const API_KEY_PREFIX = 'sf_';

export interface IssuedKey {
  key: string;
  hash: string;
}

export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export function newApiKey(): IssuedKey {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, hash: hashApiKey(key) };
}
