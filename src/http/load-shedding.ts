/**
 * Load shedding (@fastify/under-pressure): a server that is behind answers 503 at once rather than
 * take on more. The thresholds, and why `/healthz` is exempt and `/readyz` is not:
 * docs/configuration.md "Load shedding".
 */
import underPressure from '@fastify/under-pressure';
import type { Api } from './api.js';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { sendProblem } from './problem.js';
import { throttledLog } from './throttled-log.js';
import type { Metrics } from '../metrics/registry.js';

const SHED_RETRY_AFTER_SECONDS = 5;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answered even while the server sheds load (`/healthz`). */
    notShed?: boolean;
  }
}

export async function shedLoad(app: Api, config: Config, log: Logger, metrics: Metrics): Promise<void> {
  const trouble = throttledLog(log);
  await app.register(underPressure, {
    maxEventLoopDelay: config.LOAD_SHED_EVENT_LOOP_DELAY_MS,
    maxHeapUsedBytes: config.LOAD_SHED_HEAP_USED_BYTES,
    maxRssBytes: config.LOAD_SHED_RSS_BYTES,
    pressureHandler: (req, reply, type, value) => {
      if (req.routeOptions.config.notShed) return; // handled as usual
      metrics.loadShed.inc();
      // The measurements are for the log only: they are nobody else's business.
      trouble.refused('load_shed', req, { pressure: type, value });
      // Nothing of the body is read: the connection closes after the answer.
      reply.header('retry-after', String(SHED_RETRY_AFTER_SECONDS)).header('connection', 'close');
      sendProblem(
        reply,
        503,
        'overloaded',
        'Service unavailable',
        `the server is overloaded; try again in ${SHED_RETRY_AFTER_SECONDS} s`,
        undefined,
        true,
      );
    },
  });
}
