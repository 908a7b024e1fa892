/**
 * Console sessions (src/http/sessions.ts, session-routes.ts): a user's key exchanged for a cookie
 * admitted exactly as a bearer request with that key, protected against cross-site requests, ended
 * by sign-out, idleness, a revoked key or a removed membership, on every process of the store.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/clock.js';
import { ADMIN_KEY, expectProblem, expectRefused, startTestApp, type TestApp } from '../helpers/app.js';

const ORIGIN = 'http://127.0.0.1:8080';
/** What the console sends: its header and its own origin (the test app's public base URL). */
const CONSOLE = { 'x-shopfloor-console': '1', origin: ORIGIN };

let apps: TestApp[] = [];
afterEach(async () => {
  // The first app's data directory is every app's here: it goes last, and takes it along.
  for (const [i, t] of [...apps].reverse().entries()) await t.close({ keepData: i < apps.length - 1 });
  apps = [];
});

async function app(env: Record<string, string> = {}, clock?: ReturnType<typeof manualClock>) {
  const t = await startTestApp(env, clock);
  apps.push(t);
  return t;
}

function cookieOf(res: LightMyRequestResponse): string {
  const set = [res.headers['set-cookie']].flat().find((c) => c?.startsWith('shopfloor_session='));
  if (!set) throw new Error(`no session cookie in ${JSON.stringify(res.headers)}`);
  return set.split(';')[0]!;
}

const signIn = (t: TestApp, key: string, headers: Record<string, string> = CONSOLE) =>
  t.app.inject({ method: 'POST', url: '/api/v1/session', headers, payload: { api_key: key } });

/** A request with the session cookie only (no bearer key), as the browser sends it. */
const withCookie = (
  t: TestApp,
  cookie: string,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  body?: unknown,
  headers: Record<string, string> = CONSOLE,
) =>
  t.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: { cookie, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });

describe('signing in', () => {
  it("exchanges a user's key for an HttpOnly, SameSite=Strict cookie that is admitted like the key", async () => {
    const t = await app();
    const res = await signIn(t, ADMIN_KEY);
    expect(res.statusCode, res.body).toBe(201);
    const set = String(res.headers['set-cookie']);
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/SameSite=Strict/);
    expect(set).toMatch(/Path=\/api\//);
    expect(set).not.toMatch(/Secure/);
    expect(set).not.toContain(ADMIN_KEY);
    expect(res.json()).toMatchObject({ user_uid: t.adminUid, teams: [{ uid: t.teamUid, role: 'admin' }] });
    const cookie = cookieOf(res);
    expect((await withCookie(t, cookie, 'GET', '/session')).json()).toMatchObject({ user_uid: t.adminUid });
    const created = await withCookie(t, cookie, 'POST', '/factory', { name: 'By cookie' });
    expect(created.statusCode, created.body).toBe(201);
    const list = await t.call('GET', '/factory');
    expect(list.json().factories.map((f: { name: string }) => f.name)).toContain('By cookie');
  });

  it('marks the cookie Secure when the public base URL is https', async () => {
    const t = await app({ PUBLIC_BASE_URL: 'https://shopfloor.example' });
    const res = await signIn(t, ADMIN_KEY, { 'x-shopfloor-console': '1', origin: 'https://shopfloor.example' });
    expect(res.statusCode, res.body).toBe(201);
    expect(String(res.headers['set-cookie'])).toMatch(/Secure/);
  });

  it('refuses a key that opens nothing, an agent key, and a body without a key, writing nothing', async () => {
    const t = await app();
    await expectRefused(t, () => signIn(t, 'sf_not_a_key_at_all_0123456789'), 401, 'authentication_required');
    const agent = (await t.call('POST', '/agent/identities', { name: 'Bot', agent_type: 'CUSTOM' })).json().uid;
    const agentKey = (await t.call('POST', `/agent/identities/${agent}/api-keys`)).json().api_key;
    const refused = await expectRefused(t, () => signIn(t, agentKey), 403, 'agent_cannot_sign_in');
    expect(refused.detail).toMatch(/Agent keys cannot sign in/);
    const empty = await expectRefused(
      t,
      () => t.app.inject({ method: 'POST', url: '/api/v1/session', headers: CONSOLE, payload: {} }),
      400,
    );
    expect(empty.errors[0].path).toBe('body.api_key');
  });

  it('refuses a sign-in from another site: without the console header, or from another origin', async () => {
    const t = await app();
    const noHeader = await expectRefused(t, () => signIn(t, ADMIN_KEY, { origin: ORIGIN }), 403, 'cross_site_request');
    expect(noHeader.detail).toMatch(/x-shopfloor-console/);
    await expectRefused(
      t,
      () => signIn(t, ADMIN_KEY, { 'x-shopfloor-console': '1', origin: 'https://evil.example' }),
      403,
      'cross_site_request',
    );
    await expectRefused(t, () => signIn(t, ADMIN_KEY, { 'x-shopfloor-console': '1' }), 403, 'cross_site_request');
  });
});

describe('cross-site requests', () => {
  it('refuses unsafe cookie requests without the header or from another origin, and writes nothing', async () => {
    const t = await app();
    const cookie = cookieOf(await signIn(t, ADMIN_KEY));
    // What a form on another site can send: the cookie is not even sent cross-site (SameSite=Strict),
    // and were it sent, neither the header nor the origin would match.
    const form = { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' };
    await expectRefused(t, () => withCookie(t, cookie, 'POST', '/factory', undefined, form), 403, 'cross_site_request');
    await expectRefused(
      t,
      () => withCookie(t, cookie, 'POST', '/factory', { name: 'x' }, { origin: ORIGIN }),
      403,
      'cross_site_request',
    );
    await expectRefused(
      t,
      () =>
        withCookie(
          t,
          cookie,
          'POST',
          '/factory',
          { name: 'x' },
          { 'x-shopfloor-console': '1', origin: 'https://evil.example' },
        ),
      403,
      'cross_site_request',
    );
    // The host the request was sent to counts as this server's origin too (a proxy keeping Host).
    const viaHost = await withCookie(
      t,
      cookie,
      'POST',
      '/factory',
      { name: 'x' },
      {
        'x-shopfloor-console': '1',
        origin: 'https://console.internal',
        host: 'console.internal',
      },
    );
    expect(viaHost.statusCode, viaHost.body).toBe(201);
  });

  it('lets safe cookie requests through without the header, and leaves bearer requests alone', async () => {
    const t = await app();
    const cookie = cookieOf(await signIn(t, ADMIN_KEY));
    expect((await withCookie(t, cookie, 'GET', '/factory', undefined, {})).statusCode).toBe(200);
    expect((await t.call('POST', '/factory', { name: 'By bearer' })).statusCode).toBe(201);
  });
});

describe('ending a session', () => {
  it('signs out on the server: the cookie is cleared and refused afterwards', async () => {
    const t = await app();
    const cookie = cookieOf(await signIn(t, ADMIN_KEY));
    const out = await withCookie(t, cookie, 'DELETE', '/session');
    expect(out.statusCode, out.body).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/shopfloor_session=;.*Expires=Thu, 01 Jan 1970/);
    expectProblem(await withCookie(t, cookie, 'GET', '/factory'), 401, 'authentication_required');
  });

  it('refuses a cross-site sign-out (a foreign page cannot end the session either)', async () => {
    const t = await app();
    const cookie = cookieOf(await signIn(t, ADMIN_KEY));
    expectProblem(await withCookie(t, cookie, 'DELETE', '/session', undefined, {}), 403, 'cross_site_request');
    expect((await withCookie(t, cookie, 'GET', '/session')).statusCode).toBe(200);
  });

  it('ends once its key is revoked', async () => {
    const t = await app();
    const key = (await t.call('POST', '/me/api-keys', { label: 'console' })).json();
    const cookie = cookieOf(await signIn(t, key.api_key));
    expect((await withCookie(t, cookie, 'GET', '/factory')).statusCode).toBe(200);
    expect((await t.call('DELETE', `/me/api-keys/${key.key_id}`)).statusCode).toBe(204);
    const refused = expectProblem(await withCookie(t, cookie, 'GET', '/factory'), 401, 'authentication_required');
    expect(refused.detail).toMatch(/revoked/);
    // Ended, not merely refused: it does not come back.
    expectProblem(await withCookie(t, cookie, 'GET', '/session'), 401);
  });

  it('loses a team its user was removed from, and keeps the others', async () => {
    const t = await app();
    const other = (await t.call('POST', '/teams', { name: 'Second' })).json().uid;
    const member = await t.addMember(t.teamUid, { email: 'two@example.com' });
    expect((await t.call('POST', `/teams/${other}/members`, { email: 'two@example.com' })).statusCode).toBe(201);
    const cookie = cookieOf(await signIn(t, member.api_key));
    const inTeam = (team: string) =>
      withCookie(t, cookie, 'GET', '/factory', undefined, { 'x-service-team-uid': team });
    expect((await inTeam(other)).statusCode).toBe(200);
    expect((await t.call('DELETE', `/teams/${other}/members/${member.user.uid}`)).statusCode).toBe(204);
    expectProblem(await inTeam(other), 403, 'not_authorized');
    expect((await inTeam(t.teamUid)).statusCode).toBe(200);
    expect((await withCookie(t, cookie, 'GET', '/session')).json().teams).toEqual([{ uid: t.teamUid, role: 'member' }]);
  });

  it('times out after the idle timeout, and a request before it keeps it alive', async () => {
    const clock = manualClock('2026-06-01T12:00:00.000Z');
    const t = await app({ CONSOLE_SESSION_IDLE_MINUTES: '30' }, clock);
    const res = await signIn(t, ADMIN_KEY);
    expect(res.json()).toMatchObject({ idle_timeout_seconds: 1800, expires_at: '2026-06-01T12:30:00.000Z' });
    const cookie = cookieOf(res);
    clock.advance(29 * 60_000);
    const used = await withCookie(t, cookie, 'GET', '/session');
    expect(used.json().expires_at).toBe('2026-06-01T12:59:00.000Z');
    clock.advance(29 * 60_000);
    expect((await withCookie(t, cookie, 'GET', '/factory')).statusCode).toBe(200);
    clock.advance(30 * 60_000);
    const timedOut = expectProblem(await withCookie(t, cookie, 'GET', '/factory'), 401);
    expect(timedOut.detail).toMatch(/timed out/);
  });

  it('ends at the latest CONSOLE_SESSION_MAX_HOURS after sign-in, however often it is used', async () => {
    const clock = manualClock('2026-06-01T12:00:00.000Z');
    const t = await app({ CONSOLE_SESSION_IDLE_MINUTES: '30', CONSOLE_SESSION_MAX_HOURS: '1' }, clock);
    const cookie = cookieOf(await signIn(t, ADMIN_KEY));
    for (let i = 0; i < 3; i++) {
      clock.advance(20 * 60_000 - 1);
      expect((await withCookie(t, cookie, 'GET', '/factory')).statusCode).toBe(200);
    }
    clock.advance(10);
    expectProblem(await withCookie(t, cookie, 'GET', '/factory'), 401);
  });
});

describe('several processes on one store', () => {
  it('a session opened through one process is admitted and ended through another', async () => {
    const a = await app();
    const b = await app({ DATA_DIR: a.dir });
    const cookie = cookieOf(await signIn(a, ADMIN_KEY));
    expect((await withCookie(b, cookie, 'GET', '/session')).statusCode).toBe(200);
    expect((await withCookie(b, cookie, 'DELETE', '/session')).statusCode).toBe(204);
    expectProblem(await withCookie(a, cookie, 'GET', '/factory'), 401);
  });
});

describe('the OpenAPI document', () => {
  it('describes the session operations with their answers', async () => {
    const t = await app();
    const paths = (await t.call('GET', '/openapi.json')).json().paths;
    expect(paths['/api/v1/session'].post.responses['201'].content['application/json'].schema.properties).toHaveProperty(
      'expires_at',
    );
    expect(paths['/api/v1/session'].get.responses['200']).toBeDefined();
    expect(paths['/api/v1/session'].delete.responses['204']).toBeDefined();
  });
});
