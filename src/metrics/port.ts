/** METRICS_PORT: `/metrics` on a listener of its own, on HOST, for a scraper the API port does not serve. */
import Fastify from 'fastify';
import type { Config } from '../config.js';
import type { Metrics } from './registry.js';
import { metricsRoute } from './routes.js';

export async function serveMetricsPort(config: Config, metrics: Metrics) {
  const app = Fastify({ logger: false });
  metricsRoute(app as never, metrics, { ...config, METRICS_PORT: undefined }, { openToAll: !config.METRICS_TOKEN });
  await app.listen({ host: config.HOST, port: config.METRICS_PORT });
  return app;
}
