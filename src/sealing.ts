/**
 * Secrets at rest: AES-256-GCM under SECRETS_KEY, or a key made once and kept in DATA_DIR (like
 * the URL-signing key). Events only ever hold the sealed form, so history shows no secret.
 * Part of the platform: team secrets and webhooks seal with it, and so do the answers an
 * Idempotency-Key records (http/idempotency.ts).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import { ownerOnlyDir, writeOwnerOnlyOnce } from './owner-only.js';

export interface Sealer {
  seal(clear: string): string;
  /** The clear text, or null when the sealed value is damaged or from another key. */
  open(sealed: string): string | null;
}

function keyOf(config: Config): Buffer {
  if (config.SECRETS_KEY) return Buffer.from(config.SECRETS_KEY, 'base64');
  const file = path.join(config.DATA_DIR, 'secrets.key');
  ownerOnlyDir(config.DATA_DIR);
  writeOwnerOnlyOnce(file, randomBytes(32).toString('base64'));
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
}

export function sealer(key: Buffer): Sealer {
  if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes, base64-encoded');
  return {
    seal(clear) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), data]
        .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
        .join('.');
    },
    open(sealed) {
      const [version, iv, tag, data] = sealed.split('.');
      if (version !== 'v1' || iv === undefined || tag === undefined || data === undefined) return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}

const byDataDir = new Map<string, { key: Buffer; sealer: Sealer }>();

function keyed(config: Config) {
  const id = `${config.DATA_DIR}\0${config.SECRETS_KEY ?? ''}`;
  let k = byDataDir.get(id);
  if (!k) {
    const key = keyOf(config);
    byDataDir.set(id, (k = { key, sealer: sealer(key) }));
  }
  return k;
}

/** The one sealer of this configuration (the key file is read once). */
export const sealerFor = (config: Config): Sealer => keyed(config).sealer;

/** The key itself, for sealers of keys derived from it. */
export const secretsKeyFor = (config: Config): Buffer => keyed(config).key;
