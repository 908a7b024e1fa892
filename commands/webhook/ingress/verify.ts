/**
 * Signature verification per provider, with the providers' own libraries where they publish one
 * (Standard Webhooks, GitHub) and their documented algorithms otherwise. Every comparison is
 * constant-time. Says whether the request is authentic, and what its signature vouches for
 * besides the body; never throws on hostile input.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { verify as verifyGithub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import type { SignatureScheme } from '../events.js';
import { own } from '../../../src/own-keys.js';

/** Stripe's library default, and the spec's five minutes. */
const STRIPE_TOLERANCE_SECONDS = 300;

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = own(headers, name);
  return Array.isArray(value) ? value[0] : value;
};

/** Equal strings, compared in constant time (hashing first makes the lengths equal). */
export const safeEqual = (a: string, b: string) =>
  timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

const hmacHex = (algorithm: 'sha256' | 'sha1', secret: string, data: Buffer | string) =>
  createHmac(algorithm, secret).update(data).digest('hex');

const anyEqual = (candidates: string[], expected: string) =>
  candidates.reduce((found, c) => safeEqual(c, expected) || found, false);

/** An authentic delivery, with the message id its signature covers (Standard Webhooks only). */
export type Verified = { signedId: string | null };

const authentic = (signedId: string | null = null): Verified => ({ signedId });

function verifyStandardWebhooks(secret: string, body: Buffer, headers: IncomingHttpHeaders): Verified | null {
  // Svix sends the same three values under svix-* names.
  const pick = (name: string) => header(headers, `webhook-${name}`) ?? header(headers, `svix-${name}`) ?? '';
  const id = pick('id');
  try {
    // The library also refuses a timestamp more than five minutes away from now.
    new Webhook(secret).verify(
      body,
      { 'webhook-id': id, 'webhook-timestamp': pick('timestamp'), 'webhook-signature': pick('signature') },
      { jsonParse: false },
    );
    // `${id}.${timestamp}.${body}` is what was signed: this very id, whichever header carried it.
    return authentic(id);
  } catch {
    return null;
  }
}

/** Exactly as stripe-node's `constructEvent`: `t=<unix>,v1=<hex>[,v1=…]`, HMAC-SHA256 of `${t}.${body}`. */
function verifyStripe(secret: string, body: Buffer, headers: IncomingHttpHeaders, nowSeconds: number): boolean {
  const parts = (header(headers, 'stripe-signature') ?? '').split(',').map((p) => p.trim().split('='));
  const timestamp = parts.find(([k]) => k === 't')?.[1];
  const signatures = parts.filter(([k, v]) => k === 'v1' && v).map(([, v]) => v!);
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || signatures.length === 0) return false;
  const expected = hmacHex('sha256', secret, Buffer.concat([Buffer.from(`${timestamp}.`), body]));
  return anyEqual(signatures, expected) && nowSeconds - Number(timestamp) <= STRIPE_TOLERANCE_SECONDS;
}

async function verifyBodyOnly(
  scheme: Exclude<SignatureScheme, 'standard_webhooks' | 'stripe'>,
  secret: string,
  body: Buffer,
  headers: IncomingHttpHeaders,
): Promise<boolean> {
  switch (scheme) {
    case 'github': {
      const signature = header(headers, 'x-hub-signature-256');
      if (!signature || body.length === 0) return false;
      return verifyGithub(secret, body.toString('utf8'), signature).catch(() => false);
    }
    case 'sentry': {
      const signature = header(headers, 'sentry-hook-signature');
      return !!signature && safeEqual(signature, hmacHex('sha256', secret, body));
    }
    case 'pagerduty': {
      const signatures = (header(headers, 'x-pagerduty-signature') ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.startsWith('v1='));
      return signatures.length > 0 && anyEqual(signatures, `v1=${hmacHex('sha256', secret, body)}`);
    }
    case 'vercel': {
      const signature = header(headers, 'x-vercel-signature');
      return !!signature && safeEqual(signature, hmacHex('sha1', secret, body));
    }
  }
}

export async function verifySignature(
  scheme: SignatureScheme,
  secret: string,
  body: Buffer,
  headers: IncomingHttpHeaders,
  nowSeconds: number,
): Promise<Verified | null> {
  switch (scheme) {
    case 'standard_webhooks':
      return verifyStandardWebhooks(secret, body, headers);
    case 'stripe':
      return verifyStripe(secret, body, headers, nowSeconds) ? authentic() : null;
    default:
      return (await verifyBodyOnly(scheme, secret, body, headers)) ? authentic() : null;
  }
}

/**
 * The id a signed delivery is deduplicated on, taken only from what its signature covers, so that
 * a captured delivery sent again under fresh delivery headers is still a Duplicate. Null means
 * the body itself (its hash), which every scheme signs. Per scheme, and why:
 * docs/features/webhooks.md "Delivery identity".
 */
export function signedDeliveryId(scheme: SignatureScheme, verified: Verified, payload: unknown): string | null {
  switch (scheme) {
    case 'standard_webhooks':
      return verified.signedId || null;
    case 'stripe': {
      const id = payload !== null && typeof payload === 'object' ? (payload as { id?: unknown }).id : undefined;
      return typeof id === 'string' && id !== '' ? id : null;
    }
    default:
      return null;
  }
}

export { header as firstHeader };
