/**
 * The console is served at / from its committed build (src/http/console.ts): its page for every
 * console path, its files with long caching, security headers on every console answer, and never
 * in place of the server's own paths, whose unknown paths stay problem documents.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const get = (url: string, method: 'GET' | 'HEAD' | 'POST' = 'GET') => t.app.inject({ method, url });

function expectSecurityHeaders(headers: Record<string, unknown>) {
  const csp = String(headers['content-security-policy']);
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("connect-src 'self'");
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('same-origin');
}

describe('the console', () => {
  it('serves its page at / and at any console path (a reload of a deep link), with security headers', async () => {
    for (const url of [
      '/',
      '/runs',
      '/webhooks',
      '/webhooks?factory=f',
      '/runs/01J0000000000000000000000',
      '/factories/f/tasks/t?tab=board',
      '/no/such/page',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('<div id="app">');
      expect(res.headers['cache-control']).toBe('no-cache');
      expectSecurityHeaders(res.headers);
    }
    expect((await get('/runs', 'HEAD')).statusCode).toBe(200);
  });

  it('serves its built files, cached for good, with the same headers; no inline script in its page', async () => {
    const page = (await get('/')).body;
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const scripts = [...page.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const asset of scripts) {
      const res = await get(asset);
      expect(res.statusCode, asset).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expectSecurityHeaders(res.headers);
    }
    expect(fs.existsSync(new URL('../../console/dist/.vite/manifest.json', import.meta.url))).toBe(true);
    expect((await get('/.vite/manifest.json')).body).not.toContain('"isEntry"');
  });

  it('never shadows the API, the docs, the probes, metrics or the webhook ingress', async () => {
    expectProblem(await get('/api/v1/no-such-route'), 404, 'not_found');
    expectProblem(await get('/api/v1'), 404, 'not_found');
    // The Prometheus exposition (loopback here), not the console's page.
    expect((await get('/metrics')).headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expectProblem(await get('/webhooks/w'), 404, 'not_found');
    expectProblem(await get('/webhooks/'), 404, 'not_found');
    expectProblem(await get('/assets/no-such-file.js'), 404, 'not_found');
    expect((await get('/healthz')).json()).toEqual({ status: 'ok' });
    expect((await get('/readyz')).statusCode).toBe(200);
    const docs = await get('/docs/');
    expect(docs.statusCode).toBe(200);
    expect(docs.body).not.toContain('<div id="app">');
    expect((await get('/api/v1/openapi.json')).json()).toHaveProperty('openapi');
  });

  it('answers other methods on console paths as no route (a problem document)', async () => {
    expectProblem(await get('/runs', 'POST'), 404, 'not_found');
  });
});
