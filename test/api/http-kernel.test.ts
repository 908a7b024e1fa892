import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, expectProblem, expectRefused, startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('HTTP kernel', () => {
  it('answers health and readiness at the root', async () => {
    expect((await t.app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ready', set_aside: [], reactors: { set_aside: [] } });
    // Once the reactors have passed the bootstrap's few events, nothing is catching up.
    await expect
      .poll(async () => (await t.app.inject({ url: '/readyz' })).json())
      .toEqual({ status: 'ready', set_aside: [], reactors: { catching_up: [], set_aside: [] } });
  });

  it('serves the OpenAPI document and Swagger UI without a credential', async () => {
    const doc = await t.app.inject({ url: '/api/v1/openapi.json' });
    expect(doc.statusCode).toBe(200);
    expect(doc.json().paths).toHaveProperty('/api/v1/factory');
    expect((await t.app.inject({ url: '/docs/' })).statusCode).toBe(200);
  });

  it('requires a valid bearer credential', async () => {
    expectProblem(await t.call('GET', '/factory', undefined, null), 401, 'authentication_required');
    expectProblem(await t.call('GET', '/factory', undefined, 'sf_not_a_key'), 401);
    expectProblem(
      await t.app.inject({ url: '/api/v1/factory', headers: { authorization: `Basic ${ADMIN_KEY}` } }),
      401,
    );
    await expectRefused(t, () => t.call('POST', '/factory', { name: 'x' }, null), 401);
  });

  it('refuses a team header naming a team the caller is not in', async () => {
    await expectRefused(
      t,
      () => t.call('POST', '/factory', { name: 'x' }, undefined, { 'x-service-team-uid': 'no-such-team' }),
      403,
    );
  });

  it('answers problem+json for unknown routes, wrong methods and media types', async () => {
    expectProblem(await t.call('GET', '/no/such/route'), 404);
    // A GET of an unknown path outside the API is the console's page (test/api/console-serving.test.ts).
    expectProblem(await t.app.inject({ method: 'POST', url: '/nowhere' }), 404);
    const wrong = await t.call('PUT', '/factory');
    expectProblem(wrong, 405);
    expect(wrong.headers.allow).toContain('POST');
    await expectRefused(
      t,
      () => t.call('POST', '/factory', 'name=x', undefined, { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
    );
    await expectRefused(t, () => t.call('POST', '/factory', '{bad json'), 400, 'invalid_json');
  });

  it('refuses cursors of another sort or of the wrong shape', async () => {
    const forged = (v: unknown) => Buffer.from(JSON.stringify({ s: 'name:asc,id:asc', v })).toString('base64url');
    expectProblem(await t.call('GET', `/factory?cursor=${forged([{ x: 1 }, 'y'])}`), 400, 'invalid_cursor');
    expectProblem(await t.call('GET', `/factory?cursor=${forged(['a'])}`), 400, 'invalid_cursor');
    const otherSort = Buffer.from(JSON.stringify({ s: 'created_at:desc,id:desc', v: ['a', 'b'] })).toString(
      'base64url',
    );
    expectProblem(await t.call('GET', `/factory?cursor=${otherSort}`), 400, 'invalid_cursor');
    expect((await t.call('GET', `/factory?cursor=${forged(['a', 'b'])}`)).statusCode).toBe(200);
  });
});
