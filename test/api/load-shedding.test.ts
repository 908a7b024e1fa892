/**
 * Load shedding: over a threshold (here a heap of 1 byte, over it from the first sample) every
 * route answers 503 `overloaded` with Retry-After, before reading a body and before checking a
 * credential, but for /healthz and /metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startTestApp, type TestApp } from '../helpers/app.js';
import { sample, scrape } from '../helpers/prometheus.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ LOAD_SHED_HEAP_USED_BYTES: '1' });
});
afterAll(() => t.close());

describe('load shedding', () => {
  it('answers 503 overloaded with Retry-After everywhere but /healthz once a threshold is passed', async () => {
    // The plugin samples once a second: the first sample sees the heap over its threshold.
    for (const deadline = Date.now() + 5_000; (await t.call('GET', '/factory')).statusCode !== 503; ) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 50));
    }
    const before = await t.head();
    for (const res of [
      await t.call('GET', '/factory'),
      await t.call('POST', '/factory', { name: 'Shed' }),
      await t.call('GET', '/factory', undefined, null),
      await t.app.inject({ method: 'POST', url: '/webhooks/w/anything', payload: '{}' }),
      await t.app.inject({ url: '/readyz' }),
    ]) {
      const problem = expectProblem(res, 503, 'overloaded');
      expect(problem.retryable).toBe(true);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.headers.connection).toBe('close');
    }
    expect(await t.head()).toBe(before);
    const health = await t.app.inject({ url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
    // The metrics are read exactly when the server is overloaded: they count the refusals.
    expect(sample(await scrape(t.app), 'shopfloor_load_shed_total')).toBeGreaterThanOrEqual(6);
  });
});
