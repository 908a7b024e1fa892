/**
 * `/metrics`: scraped and parsed with a Prometheus text parser; who may read it (token, own port,
 * loopback); and the bound on its series: many teams, routes, 404s on random paths and url_token
 * webhook paths add no series once each route template, method and status has been seen.
 */
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { serveMetricsPort } from '../../../src/metrics/port.js';
import { expectProblem, startTestApp } from '../../helpers/app.js';
import { parseExposition, sample, scrape } from '../../helpers/prometheus.js';

const t = await startTestApp();
afterAll(() => t.close());

/** Stand-ins for random input, the same on every run. */
const noise = (seed: string) => createHash('sha256').update(seed).digest('hex').slice(0, 24);

/** A team with a factory and a url_token webhook, posted to with its token and with wrong ones. */
async function driveOneTeam(round: string, i: number): Promise<string[]> {
  const team = (await t.call('POST', '/teams', { name: `Team ${round}${i}` })).json().uid as string;
  const inTeam = { 'x-service-team-uid': team };
  const factory = (await t.call('POST', '/factory', { name: `F${round}${i}` }, undefined, inTeam)).json().uid as string;
  const hook = (
    await t.call('POST', `/factory/${factory}/webhooks`, { name: 'u', authMode: 'url_token' }, undefined, inTeam)
  ).json() as { uid: string; secret: string };
  await t.call('GET', `/factory/${factory}`, undefined, undefined, inTeam);
  await t.call('GET', `/factory/${factory}/tasks`, undefined, undefined, inTeam);
  await t.call('PATCH', `/factory/${factory}`, { description: noise(`${round}${i}d`) }, undefined, inTeam);
  const post = (url: string) =>
    t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '{}' });
  const wrong = noise(`${round}${i}token`);
  await post(`/webhooks/w/${hook.uid}/${hook.secret}`);
  await post(`/webhooks/w/${hook.uid}/${wrong}`);
  await post(`/webhooks/w/${noise(`${round}${i}uid`)}/${wrong}`);
  return [team, factory, hook.uid, hook.secret, wrong];
}

async function driveRound(round: string): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < 6; i++) seen.push(...(await driveOneTeam(round, i)));
  for (let i = 0; i < 40; i++) {
    const path = `/${noise(`${round}${i}path`)}/${noise(`${round}${i}more`)}`;
    seen.push(path);
    await t.app.inject({ url: path });
    await t.call('GET', path);
    await t.call('GET', `/factory/${noise(`${round}${i}f`)}`);
  }
  return seen;
}

const httpSeries = (s: Map<string, { metrics: Array<{ labels?: Record<string, string> }> }>) =>
  s.get('shopfloor_http_requests_total')?.metrics ?? [];

describe('/metrics', () => {
  it('exposes requests, appends, read model lag, load shedding and the process in Prometheus text', async () => {
    await t.call('POST', '/factory', { name: 'Scraped' });
    const s = await scrape(t.app);
    expect(
      sample(s, 'shopfloor_http_requests_total', { route: '/api/v1/factory', method: 'POST', status: '201' }),
    ).toBe(1);
    const latency = s.get('shopfloor_http_request_duration_seconds')!;
    expect(latency.type).toBe('HISTOGRAM');
    // The text parser folds a labelled histogram's series together (it handles unlabelled ones
    // only): the series are read from prom-client's registry instead, as it exposes them.
    const histogram = (await t.rt.metrics.registry.getMetricsAsJSON()).find((m) => m.name === latency.name)!;
    const posted = (histogram.values as Array<{ labels: Record<string, unknown>; value: number; metricName?: string }>)
      .filter((v) => v.labels.route === '/api/v1/factory' && v.labels.method === 'POST')
      .map((v) => [
        v.metricName?.replace(latency.name, ''),
        v.labels.le ?? '',
        v.metricName?.endsWith('_sum') ? v.value > 0 : v.value,
      ]);
    // Cumulative buckets: the widest and +Inf hold the one request, as does the count; the sum is its time.
    expect(posted).toEqual(
      expect.arrayContaining([
        ['_bucket', 10, 1],
        ['_bucket', '+Inf', 1],
        ['_count', '', 1],
        ['_sum', '', true],
      ]),
    );
    expect(sample(s, 'shopfloor_events_appended_total', { outcome: 'ok' })).toBeGreaterThan(0);
    expect(s.get('shopfloor_append_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(sample(s, 'shopfloor_projection_lag_events', { projection: 'factories' })).toBe(0);
    expect(sample(s, 'shopfloor_projection_set_aside_events', { projection: 'factories' })).toBe(0);
    expect(s.get('shopfloor_reactor_lag_events')?.metrics.length).toBeGreaterThan(0);
    expect(sample(s, 'shopfloor_load_shed_total')).toBe(0);
    expect(sample(s, 'shopfloor_process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('keeps its series bounded: teams, ids, random paths and url tokens add none', async () => {
    await driveRound('a');
    const first = httpSeries(await scrape(t.app));
    const seen = await driveRound('b');
    const second = httpSeries(await scrape(t.app));
    expect(second.length).toBe(first.length);
    expect(second.length).toBeLessThan(40);
    const all = (await t.app.inject({ url: '/metrics' })).body;
    for (const value of seen) expect(all).not.toContain(value);
    const routes = new Set(second.map((m) => m.labels?.route));
    expect(routes).toContain('(unmatched)');
    expect(routes).toContain('/webhooks/w/:webhook_uid/:token');
    expect(routes).toContain('/api/v1/factory/:factory_uid');
  });

  it('answers loopback clients only when neither METRICS_TOKEN nor METRICS_PORT is set', async () => {
    const res = await t.app.inject({ url: '/metrics', remoteAddress: '192.0.2.7' });
    expectProblem(res, 403, 'forbidden');
    expect((await t.app.inject({ url: '/metrics', remoteAddress: '::1' })).statusCode).toBe(200);
  });

  it('asks for METRICS_TOKEN as a bearer token from anywhere when it is set', async () => {
    const token = 'metrics-token-0123456789';
    const m = await startTestApp({ METRICS_TOKEN: token });
    try {
      const remote = { remoteAddress: '192.0.2.7' };
      expectProblem(await m.app.inject({ url: '/metrics', ...remote }), 401, 'unauthorized');
      const wrong = { authorization: `Bearer ${token}x` };
      expectProblem(await m.app.inject({ url: '/metrics', headers: wrong, ...remote }), 401, 'unauthorized');
      const right = await m.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${token}` }, ...remote });
      expect(right.statusCode).toBe(200);
      expect(parseExposition(right.body).has('shopfloor_http_requests_total')).toBe(true);
    } finally {
      await m.close();
    }
  });

  it('is served on its own port, and not on the API port, with METRICS_PORT', async () => {
    const m = await startTestApp({ METRICS_PORT: '0' });
    const port = await serveMetricsPort(m.rt.config, m.rt.metrics);
    try {
      expectProblem(await m.app.inject({ url: '/metrics' }), 404, 'not_found');
      const { port: bound } = port.server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${bound}/metrics`);
      expect(res.status).toBe(200);
      expect(parseExposition(await res.text()).has('shopfloor_events_appended_total')).toBe(true);
    } finally {
      await port.close();
      await m.close();
    }
  });
});
