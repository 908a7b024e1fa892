/**
 * Requests counted and timed by route template, method and status. The template (`/api/v1/factory/:uid`),
 * never the URL: a 404 on a random path is `(unmatched)` and a `url_token` webhook path is its
 * route's template, so no request creates a series of its own.
 *
 * A request adds to plain tallies kept per series (a map lookup, two additions and a bucket); they
 * become the counter and the histogram only when Prometheus scrapes. prom-client's own histogram
 * hashes and validates the labels on every observation, even through a child, which cost a request
 * several microseconds (bench/workloads/34-request-metrics.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../http/api.js';
import { LATENCY_BUCKETS, type Metrics } from './registry.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const UNMATCHED = '(unmatched)';
const COUNTER = 'shopfloor_http_requests_total';
const HISTOGRAM = 'shopfloor_http_request_duration_seconds';

interface Tally {
  labels: { route: string; method: string; status: string };
  count: number;
  sum: number;
  /** Requests per latency bucket (not cumulative: the exposition adds them up). */
  buckets: Float64Array;
}

type Sample = { labels: Record<string, string | number>; value: number; metricName?: string };

/** The histogram's samples of one series: cumulative buckets, +Inf, sum and count. */
function histogramSamples(t: Tally): Sample[] {
  const samples: Sample[] = [];
  let cumulative = 0;
  LATENCY_BUCKETS.forEach((le, i) => {
    cumulative += t.buckets[i]!;
    samples.push({ metricName: `${HISTOGRAM}_bucket`, labels: { ...t.labels, le }, value: cumulative });
  });
  samples.push({ metricName: `${HISTOGRAM}_bucket`, labels: { ...t.labels, le: '+Inf' }, value: t.count });
  samples.push({ metricName: `${HISTOGRAM}_sum`, labels: t.labels, value: t.sum });
  samples.push({ metricName: `${HISTOGRAM}_count`, labels: t.labels, value: t.count });
  return samples;
}

export function measureRequests(app: Api, metrics: Metrics): void {
  const tallies = new Map<string, Tally>();
  const tallyOf = (req: FastifyRequest, reply: FastifyReply): Tally => {
    const route = req.routeOptions.url ?? UNMATCHED;
    const method = METHODS.has(req.method) ? req.method : 'OTHER';
    const key = `${method} ${reply.statusCode} ${route}`;
    let t = tallies.get(key);
    if (!t) {
      const labels = { route, method, status: String(reply.statusCode) };
      t = { labels, count: 0, sum: 0, buckets: new Float64Array(LATENCY_BUCKETS.length) };
      tallies.set(key, t);
    }
    return t;
  };
  const all = () => [...tallies.values()];
  metrics.custom({
    name: COUNTER,
    help: 'HTTP requests answered, by route template, method and status',
    type: 'counter',
    values: () => all().map((t) => ({ labels: t.labels, value: t.count })),
  });
  metrics.custom({
    name: HISTOGRAM,
    help: 'Time to answer an HTTP request, by route template, method and status',
    type: 'histogram',
    values: () => all().flatMap(histogramSamples),
  });
  app.addHook('onResponse', (req, reply, done) => {
    const t = tallyOf(req, reply);
    const seconds = reply.elapsedTime / 1000;
    t.count += 1;
    t.sum += seconds;
    const bucket = LATENCY_BUCKETS.findIndex((le) => seconds <= le);
    if (bucket >= 0) t.buckets[bucket]! += 1;
    done();
  });
}
