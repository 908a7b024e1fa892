/**
 * Cross-site request forgery, for requests a browser authenticates by itself (the console's
 * session cookie): an unsafe method must carry `X-Shopfloor-Console: 1`, a header no form and no
 * cross-origin page can send (a script of another origin would need a CORS preflight this server
 * never grants), and an `Origin` naming this server. Bearer requests are not concerned: a foreign
 * page cannot make a browser send a bearer key.
 */
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../kernel/errors.js';

const CONSOLE_HEADER = 'x-shopfloor-console';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

class CrossSiteRequest extends DomainError {
  constructor(detail: string) {
    super(403, 'cross_site_request', 'Forbidden', detail);
  }
}

/**
 * Whether `origin` names this server: the public base URL's origin, or the host the request was
 * sent to (what a proxy passing `Host` through leaves intact, whatever scheme it terminates).
 */
function sameOrigin(origin: string, req: FastifyRequest, publicBaseUrl: string): boolean {
  if (origin === new URL(publicBaseUrl).origin) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** Throws a 403 `cross_site_request` for an unsafe request that may come from another site. */
export function assertSameOrigin(req: FastifyRequest, publicBaseUrl: string): void {
  if (SAFE_METHODS.has(req.method)) return;
  if (req.headers[CONSOLE_HEADER] !== '1')
    throw new CrossSiteRequest(`a request authenticated by the console session needs the header ${CONSOLE_HEADER}: 1`);
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || !sameOrigin(origin, req, publicBaseUrl))
    throw new CrossSiteRequest('a request authenticated by the console session must come from this server (Origin)');
}
