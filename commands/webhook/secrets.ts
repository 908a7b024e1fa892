/** Which secret a new webhook gets, which supplied secrets are acceptable, and header-name rules. */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { InvalidRequest } from '../../src/kernel/errors.js';
import type { SignatureScheme, WebhookAuthMode } from './events.js';

/** URL-safe (RFC 3986 unreserved) as a url_token must be. */
const URL_SAFE = /^[A-Za-z0-9._~-]+$/;

/** A fresh secret, or null when the provider issues its own only once it has the URL. */
export function generatedSecret(mode: WebhookAuthMode, scheme: SignatureScheme | null): string | null {
  if (mode !== 'signature') return `whsec_${randomBytes(32).toString('base64url')}`;
  if (scheme === 'standard_webhooks') return `whsec_${randomBytes(32).toString('base64')}`;
  return null;
}

export function assertUsableSecret(secret: string, mode: WebhookAuthMode, scheme: SignatureScheme | null): void {
  const invalid = (message: string) => new InvalidRequest(message, [{ path: 'body.secret', message }]);
  if (secret.length < 8 || secret.length > 1024 || /[\s\0]/.test(secret))
    throw invalid('a secret has 8 to 1024 characters and no whitespace');
  if (mode === 'url_token' && !URL_SAFE.test(secret))
    throw invalid('a url_token secret must be URL-safe: A-Z a-z 0-9 - . _ ~');
  if (scheme === 'standard_webhooks') {
    try {
      new Webhook(secret);
    } catch {
      throw invalid('a Standard Webhooks secret is whsec_ followed by base64');
    }
  }
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** Headers that carry credentials or signatures: naming one would put a secret into the log as an identity. */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'api-key',
]);
const CREDENTIAL_WORDS = /signature|secret|token|password|passwd|auth|cookie|api-key|apikey|session/i;

export function deliveryIdHeaderError(name: string): string | null {
  if (!HEADER_NAME.test(name)) return 'not a valid header name';
  const lower = name.toLowerCase();
  if (CREDENTIAL_HEADERS.has(lower) || CREDENTIAL_WORDS.test(lower))
    return 'a credential or signature header cannot be the delivery ID header';
  return null;
}
