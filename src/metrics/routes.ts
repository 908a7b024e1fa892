/**
 * `/metrics`, the Prometheus exposition: with METRICS_TOKEN it asks for that bearer token; with
 * METRICS_PORT it is served on its own port only (port.ts); with neither it answers loopback
 * clients only. Answered while the server sheds load: an overloaded server is when it is read.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import type { Config } from '../config.js';
import type { Api } from '../http/api.js';
import { sendProblem } from '../http/problem.js';
import type { Metrics } from './registry.js';

const sameSecret = (given: string, expected: string): boolean => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

const isLoopback = (address: string | undefined): boolean => {
  if (!address || !ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.range() === 'loopback';
};

/** Why `req` may not read the metrics, or null when it may. */
function refusal(
  req: FastifyRequest,
  config: Config,
  openToAll: boolean,
): { status: 401 | 403; detail: string } | null {
  if (config.METRICS_TOKEN) {
    const given = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
    return sameSecret(given, config.METRICS_TOKEN)
      ? null
      : { status: 401, detail: 'the metrics need METRICS_TOKEN as a bearer token' };
  }
  return openToAll || isLoopback(req.socket.remoteAddress)
    ? null
    : { status: 403, detail: 'the metrics answer loopback clients only (set METRICS_TOKEN or METRICS_PORT)' };
}

/** `openToAll`: the metrics' own port, where whoever reaches it may read them unless a token is set. */
export function metricsRoute(app: Api, metrics: Metrics, config: Config, { openToAll = false } = {}): void {
  if (config.METRICS_PORT !== undefined) return; // served on its own port instead (port.ts)
  app.get('/metrics', { schema: { hide: true }, config: { notShed: true } }, async (req, reply) => {
    const refused = refusal(req, config, openToAll);
    if (refused) {
      if (refused.status === 401) reply.header('www-authenticate', 'Bearer');
      return sendProblem(
        reply,
        refused.status,
        refused.status === 401 ? 'unauthorized' : 'forbidden',
        refused.status === 401 ? 'Unauthorized' : 'Forbidden',
        refused.detail,
      );
    }
    const body = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(body);
  });
}
