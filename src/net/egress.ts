/**
 * Requests the server itself sends to addresses its users name (outbound webhooks), guarded
 * against server-side request forgery: only public unicast addresses, unless the operator allows
 * more ranges. The address is checked when the connection is made (the resolved address is the
 * one connected to, so a name that resolves differently later gains nothing), and redirects are
 * never followed: a 3xx is an answer like any other.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Ranges the operator allows beyond the public internet (`OUTBOUND_ALLOWED_RANGES`). */
export type AllowedRanges = ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>;

export function parseAllowedRanges(list: string): AllowedRanges {
  return list
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => {
      try {
        return ipaddr.parseCIDR(r.includes('/') ? r : `${r}/${ipaddr.parse(r).kind() === 'ipv4' ? 32 : 128}`);
      } catch {
        throw new Error(`OUTBOUND_ALLOWED_RANGES: ${r} is not an IP address or CIDR range`);
      }
    });
}

/** Whether the server may connect to `address`: public unicast, or within an allowed range. */
export function addressAllowed(address: string, allowed: AllowedRanges): boolean {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address); // IPv4-mapped IPv6 becomes the IPv4 address it maps
  } catch {
    return false;
  }
  if (allowed.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits))) return true;
  return ip.range() === 'unicast';
}

export class EgressRefused extends Error {
  constructor(readonly host: string) {
    super(`${host} resolves to an address outbound requests may not reach (loopback, link-local, private or reserved)`);
    this.name = 'EgressRefused';
  }
}

/** Why the server may not send to `url` (scheme, credentials, a refused address), or null. */
export async function urlProblem(url: string, allowed: AllowedRanges): Promise<string | null> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'only http and https URLs';
  if (u.username || u.password) return 'a URL may not carry credentials';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) return addressAllowed(host, allowed) ? null : new EgressRefused(host).message;
  try {
    const addresses = await dns.promises.lookup(host, { all: true });
    if (addresses.some((a) => !addressAllowed(a.address, allowed))) return new EgressRefused(host).message;
  } catch {
    // Unresolvable now: checked again when sending.
  }
  return null;
}

/** dns.lookup, refusing a name any of whose addresses is not allowed. */
const guardedLookup =
  (allowed: AllowedRanges): LookupFunction =>
  (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as dns.LookupAddress[];
      if (!list.length || list.some((a) => !addressAllowed(a.address, allowed)))
        return callback(Object.assign(new EgressRefused(hostname), { code: 'EGRESS_REFUSED' }), '', 0);
      if ((options as dns.LookupOptions).all)
        return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };

export interface PostResult {
  status: number;
  /** At most the first 1 KiB of the answer, for the delivery log. */
  body: string;
}

const MAX_KEPT_BODY = 1024;

/** POSTs `body` to `url` through the guard; rejects on a refused address, a network error or the timeout. */
export function guardedPost(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { allowed: AllowedRanges; timeoutMs: number },
): Promise<PostResult> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (ipaddr.isValid(host) && !addressAllowed(host, options.allowed)) return reject(new EgressRefused(host));
    const send = u.protocol === 'https:' ? https.request : http.request;
    const req = send(
      u,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: guardedLookup(options.allowed),
        timeout: options.timeoutMs,
        agent: false,
      },
      (res) => {
        let kept = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (kept.length < MAX_KEPT_BODY) kept += chunk.slice(0, MAX_KEPT_BODY - kept.length);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: kept }));
        res.on('error', reject);
      },
    );
    const deadline = setTimeout(
      () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', (e) => (clearTimeout(deadline), reject(e)));
    req.on('close', () => clearTimeout(deadline));
    req.end(body);
  });
}
