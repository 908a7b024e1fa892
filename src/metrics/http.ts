/**
 * Requests counted and timed by route template, method and status. The template (`/api/v1/factory/:uid`),
 * never the URL: a 404 on a random path is `(unmatched)` and a `url_token` webhook path is its
 * route's template, so no request creates a series of its own.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Counter, Histogram } from 'prom-client';
import type { Api } from '../http/api.js';
import type { Metrics } from './registry.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const UNMATCHED = '(unmatched)';

type Series = { count: Counter.Internal; seconds: Histogram.Internal<string> };

export function measureRequests(app: Api, metrics: Metrics): void {
  const count = metrics.counter({
    name: 'shopfloor_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'],
  });
  const seconds = metrics.histogram({
    name: 'shopfloor_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route template, method and status',
    labelNames: ['route', 'method', 'status'],
  });
  // prom-client hashes the labels on every call; the children are kept instead (a bounded set).
  const series = new Map<string, Series>();
  const seriesOf = (req: FastifyRequest, reply: FastifyReply): Series => {
    const route = req.routeOptions.url ?? UNMATCHED;
    const method = METHODS.has(req.method) ? req.method : 'OTHER';
    const key = `${method} ${reply.statusCode} ${route}`;
    let found = series.get(key);
    if (!found) {
      const labels = { route, method, status: String(reply.statusCode) };
      found = { count: count.labels(labels), seconds: seconds.labels(labels) };
      series.set(key, found);
    }
    return found;
  };
  app.addHook('onResponse', (req, reply, done) => {
    const s = seriesOf(req, reply);
    s.count.inc();
    s.seconds.observe(reply.elapsedTime / 1000);
    done();
  });
}
