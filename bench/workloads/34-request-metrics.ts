/**
 * 3c. What the Prometheus request metrics add to each request (src/metrics/http.ts: one
 * onResponse hook adding to a tally per route, method and status): a bare Fastify answering a
 * factory-shaped document by id through `inject`, with and without the hook, rounds interleaved so
 * each pair shares the machine's moment; and the hook alone, called in a loop, which a loaded
 * machine disturbs far less. Tracing is off by default and then installs no hook.
 */
import Fastify from 'fastify';
import { measureRequests } from '../../src/metrics/http.js';
import { createMetrics } from '../../src/metrics/registry.js';
import type { Api } from '../../src/http/api.js';
import { QUICK } from '../lib/config.js';
import { fmt, log, now } from '../lib/measure.js';
import type { Figure, Workload } from '../lib/workload.js';

const ROUNDS = QUICK ? 3 : 15;
const REQUESTS = QUICK ? 500 : 5_000;
const DOC = {
  uid: 'f-1',
  name: 'Widgets',
  alias: null,
  description: 'A factory',
  repositories: [],
  created_at: '2026-01-01T00:00:00Z',
};

async function app(measured: boolean) {
  const a = Fastify({ logger: false });
  // The server already has an onResponse hook (its log line): the bare app gets one too, so the
  // difference is the metrics hook's own, not Fastify starting to run response hooks at all.
  a.addHook('onResponse', (_req, _reply, done) => done());
  if (measured) measureRequests(a as unknown as Api, createMetrics());
  a.get('/api/v1/factory/:factory_uid', async () => DOC);
  await a.ready();
  return a;
}

/** Microseconds per request over one round of `REQUESTS` sequential injects. */
async function round(a: Awaited<ReturnType<typeof app>>): Promise<number> {
  const started = now();
  for (let i = 0; i < REQUESTS; i++) await a.inject({ url: `/api/v1/factory/f-${i % 50}` });
  return ((now() - started) * 1000) / REQUESTS;
}

/** Nanoseconds per call of the hook alone, on requests of 20 routes (no Fastify around it). */
function hookAlone(): number {
  let hook: ((req: unknown, reply: unknown, done: () => void) => void) | undefined;
  const capture = { addHook: (_name: string, fn: typeof hook) => (hook = fn) } as unknown as Api;
  measureRequests(capture, createMetrics());
  const reqs = Array.from({ length: 20 }, (_, i) => ({
    method: 'GET',
    routeOptions: { url: `/api/v1/route${i}/:id` },
  }));
  const reply = { statusCode: 200, elapsedTime: 1.25 };
  const calls = QUICK ? 100_000 : 2_000_000;
  const started = now();
  for (let i = 0; i < calls; i++) hook!(reqs[i % 20], reply, () => {});
  return ((now() - started) * 1e6) / calls;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const workload: Workload = {
  title: 'Request metrics: the cost of the per-request hook',
  async run() {
    const [bare, measured] = [await app(false), await app(true)];
    await round(bare);
    await round(measured); // warm both
    const without: number[] = [];
    const withHook: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      without.push(await round(bare));
      withHook.push(await round(measured));
      log(`round ${r + 1}: ${fmt(without.at(-1)!, 1)} µs bare, ${fmt(withHook.at(-1)!, 1)} µs with the metrics hook`);
    }
    await bare.close();
    await measured.close();
    const [a, b] = [median(without), median(withHook)];
    const alone = median([hookAlone(), hookAlone(), hookAlone()]);
    const figures: Figure[] = [
      {
        name: 'request by inject, bare Fastify',
        value: a,
        unit: 'µs',
        detail: `median of ${ROUNDS} rounds of ${REQUESTS}`,
      },
      { name: 'the same with the metrics hook', value: b, unit: 'µs', ceiling: { name: 'bare Fastify', value: a } },
      { name: 'the hook alone', value: alone, unit: 'ns', detail: 'median of 3 runs, 20 route templates' },
      {
        name: 'added by the metrics hook',
        value: b - a,
        unit: 'µs',
        detail: `${fmt(((b - a) / a) * 100, 1)}% of a bare request`,
      },
    ];
    return {
      figures,
      notes: [
        `Load average at the end: ${(await import('node:os'))
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
      ],
    };
  },
};

export default workload;
