/**
 * The web console (console/), served from its committed build (console/dist) on the API's own
 * origin: its files, and its page for every other GET outside the server's own prefixes, so
 * that any console URL survives a reload. It never shadows /api/v1, /docs, /healthz, /readyz,
 * /metrics or /webhooks/, whose unknown paths stay problem documents.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Api } from './api.js';

const DIST = fileURLToPath(new URL('../../console/dist/', import.meta.url));
const PAGE = 'index.html';
/**
 * Paths the console never answers: the server's own, and its files (a missing one is a 404). The
 * webhook ingress owns what is under /webhooks/; /webhooks itself is the console's Webhooks page.
 */
const NOT_CONSOLE = /^\/(api|docs|healthz|readyz|metrics|assets)(\/|$)|^\/webhooks\//;

/** On every console answer: no script but its own files, no framing, no sniffing, no referrer leaving. */
const SECURITY_HEADERS = {
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
} as const;

/** Built files are named by their content: cached for good. The page itself is asked for again each time. */
const cacheControl = (file: string) =>
  path.basename(file) === PAGE ? 'no-cache' : 'public, max-age=31536000, immutable';

/** Serves the console; answers whether (and how) a path no route took is the console's page. */
export async function serveConsole(app: Api, log: Logger) {
  if (!fs.existsSync(path.join(DIST, PAGE))) {
    log.warn({ dir: DIST }, 'the console is not built: only the API is served');
    return () => false;
  }
  await app.register(fastifyStatic, {
    root: DIST,
    prefix: '/',
    wildcard: false,
    index: false,
    // The build's manifest is for the page-weight test, not for browsers.
    globIgnore: ['.vite/**'],
    setHeaders(reply, file) {
      reply.headers({ ...SECURITY_HEADERS, 'cache-control': cacheControl(file) });
    },
  });
  const page = (_req: FastifyRequest, reply: FastifyReply) => reply.sendFile(PAGE);
  app.get('/', { schema: { hide: true }, config: { public: true } }, page);
  /** The console's page for a GET or HEAD of any path of its own; false for what is not the console's. */
  return (req: FastifyRequest, reply: FastifyReply): boolean => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    if (NOT_CONSOLE.test(req.url.split('?')[0]!)) return false;
    void page(req, reply);
    return true;
  };
}
