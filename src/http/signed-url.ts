/**
 * Time-limited URLs that Shopfloor itself serves (transcripts, artifact downloads): the path and
 * expiry signed with HMAC-SHA256, checked in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface UrlSigner {
  /** `path` (with its query, if any) made valid for `ttlSeconds`; absolute under `baseUrl`. */
  sign(path: string, ttlSeconds: number, now?: Date): { url: string; expires_at: string };
  /** True when `signature` is the one for `path` and `expires` is in the future. */
  verify(path: string, expires: string, signature: string, now?: Date): boolean;
}

export function urlSigner(secret: string, baseUrl: string): UrlSigner {
  const mac = (path: string, expires: string) =>
    createHmac('sha256', secret).update(`${path}\n${expires}`).digest('base64url');
  return {
    sign(path, ttlSeconds, now = new Date()) {
      const expires = String(Math.floor(now.getTime() / 1000) + ttlSeconds);
      const sep = path.includes('?') ? '&' : '?';
      return {
        url: `${baseUrl}${path}${sep}expires=${expires}&signature=${mac(path, expires)}`,
        expires_at: new Date(Number(expires) * 1000).toISOString(),
      };
    },
    verify(path, expires, signature, now = new Date()) {
      if (!/^\d{1,12}$/.test(expires) || Number(expires) * 1000 <= now.getTime()) return false;
      const expected = Buffer.from(mac(path, expires));
      const given = Buffer.from(signature);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
