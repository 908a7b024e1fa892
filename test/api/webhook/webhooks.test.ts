import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_BASE_URL: 'https://hooks.example.com/' });
});
afterAll(() => t.close());

const newFactory = async () => (await t.call('POST', '/factory', { name: `F ${uuidv4()}` })).json().uid as string;
const create = (factory: string, body: Record<string, unknown>) => t.call('POST', `/factory/${factory}/webhooks`, body);

/** A user who belongs to another team only. */
async function strangerKey() {
  const team = (await t.call('POST', '/teams', { name: 'Other' })).json().uid as string;
  return (await t.addMember(team, { email: `s${uuidv4()}@example.com` })).api_key;
}

describe('webhook management', () => {
  it('creates a token webhook: 201, the secret once, the ingress URL under WEBHOOK_BASE_URL', async () => {
    const factory = await newFactory();
    const res = await create(factory, { name: 'Orders' });
    expect(res.statusCode, res.body).toBe(201);
    const w = res.json();
    expect(w).toMatchObject({
      name: 'Orders',
      authMode: 'token',
      signatureScheme: null,
      deliveryIdHeader: null,
      enabled: true,
      factory_uid: factory,
    });
    expect(w.ingress_url).toBe(`https://hooks.example.com/webhooks/w/${w.uid}`);
    expect(w.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);

    const one = (await t.call('GET', `/factory/${factory}/webhooks/${w.uid}`)).json();
    expect(one.secret).toBeUndefined();
    expect(one).toMatchObject({ uid: w.uid, name: 'Orders', ingress_url: w.ingress_url });
    const list = (await t.call('GET', `/factory/${factory}/webhooks`)).json();
    expect(list.webhooks.map((x: { uid: string }) => x.uid)).toEqual([w.uid]);
    expect(JSON.stringify(list)).not.toContain(w.secret);
  });

  it('never writes a secret in clear to the event log (history shows event data)', async () => {
    const factory = await newFactory();
    const w = (
      await create(factory, {
        name: 'Clear?',
        authMode: 'signature',
        signatureScheme: 'github',
        secret: 'gh-secret-value-123',
      })
    ).json();
    const rotated = await t.call('POST', `/factory/${factory}/webhooks/${w.uid}/rotate-secret`, {
      secret: 'gh-secret-rotated-456',
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().secret).toBeNull(); // a supplied secret is never echoed
    const gen = (await create(factory, { name: 'Gen' })).json();
    const log = JSON.stringify((await t.rt.events.readStream(`webhooks-${factory}`)).map((e) => e.data));
    expect(log).not.toContain('gh-secret-value-123');
    expect(log).not.toContain('gh-secret-rotated-456');
    expect(log).not.toContain(gen.secret);
    expect(log).toContain('"sealed":"v1.');
  });

  it('url_token: URL-safe generated token and a {token} placeholder in the URL', async () => {
    const factory = await newFactory();
    const w = (await create(factory, { name: 'U', authMode: 'url_token' })).json();
    expect(w.ingress_url).toBe(`https://hooks.example.com/webhooks/w/${w.uid}/{token}`);
    expect(w.secret).toMatch(/^[A-Za-z0-9._~-]+$/);
    await expectRefused(
      t,
      () => create(factory, { name: 'U2', authMode: 'url_token', secret: 'not url safe/+=' }),
      400,
      'invalid_request',
    );
  });

  it('Standard Webhooks gets a generated whsec_ base64 secret; providers that issue their own later start disabled', async () => {
    const factory = await newFactory();
    const sw = (
      await create(factory, { name: 'SW', authMode: 'signature', signatureScheme: 'standard_webhooks' })
    ).json();
    expect(sw.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(sw.enabled).toBe(true);
    for (const scheme of ['stripe', 'vercel', 'pagerduty', 'sentry', 'github']) {
      const w = (await create(factory, { name: scheme, authMode: 'signature', signatureScheme: scheme })).json();
      expect(w, scheme).toMatchObject({ enabled: false, awaiting_secret: true, secret: null });
    }
  });

  it('finishes a provider webhook with PATCH {secret}, and refuses to enable one without a secret', async () => {
    const factory = await newFactory();
    const w = (await create(factory, { name: 'Stripe', authMode: 'signature', signatureScheme: 'stripe' })).json();
    await expectRefused(
      t,
      () => t.call('PATCH', `/factory/${factory}/webhooks/${w.uid}`, { enabled: true }),
      409,
      'secret_required',
    );
    const res = await t.call('PATCH', `/factory/${factory}/webhooks/${w.uid}`, { secret: 'whsec_stripe_given_1234' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ enabled: true, awaiting_secret: false });
    expect(res.json().secret).toBeUndefined();
    // Rotating a provider webhook needs the provider's new secret.
    await expectRefused(
      t,
      () => t.call('POST', `/factory/${factory}/webhooks/${w.uid}/rotate-secret`, {}),
      400,
      'invalid_request',
    );
  });

  it('rotation answers a new secret; PATCH renames, disables, sets the delivery ID header; DELETE answers 204 then 404', async () => {
    const factory = await newFactory();
    const w = (await create(factory, { name: 'R' })).json();
    const rotated = await t.call('POST', `/factory/${factory}/webhooks/${w.uid}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().secret).toMatch(/^whsec_/);
    expect(rotated.json().secret).not.toBe(w.secret);
    const patched = await t.call('PATCH', `/factory/${factory}/webhooks/${w.uid}`, {
      name: 'R2',
      enabled: false,
      deliveryIdHeader: 'X-Event-Id',
    });
    expect(patched.json()).toMatchObject({ name: 'R2', enabled: false, deliveryIdHeader: 'x-event-id' });
    expect((await t.call('DELETE', `/factory/${factory}/webhooks/${w.uid}`)).statusCode).toBe(204);
    await expectRefused(t, () => t.call('GET', `/factory/${factory}/webhooks/${w.uid}`), 404, 'resource_not_found');
    await expectRefused(t, () => t.call('DELETE', `/factory/${factory}/webhooks/${w.uid}`), 404);
    expect((await t.call('GET', `/factory/${factory}/webhooks`)).json().webhooks).toEqual([]);
  });

  it('refuses invalid bodies with 400 and writes nothing', async () => {
    const factory = await newFactory();
    const bad: Array<Record<string, unknown>> = [
      {},
      { name: '' },
      { name: 'x', authMode: 'signature' },
      { name: 'x', signatureScheme: 'github' },
      { name: 'x', authMode: 'signature', signatureScheme: 'slack' },
      { name: 'x', authMode: 'bearer' },
      { name: 'x', deliveryIdHeader: 'not a header' },
      { name: 'x', deliveryIdHeader: 'Authorization' },
      { name: 'x', deliveryIdHeader: 'cookie' },
      { name: 'x', deliveryIdHeader: 'X-Hub-Signature-256' },
      { name: 'x', deliveryIdHeader: 'Stripe-Signature' },
      { name: 'x', deliveryIdHeader: 'X-Gitlab-Token' },
      { name: 'x', authMode: 'signature', signatureScheme: 'standard_webhooks', secret: 'whsec_!!!not-base64!!!' },
      { name: 'x', secret: 'short' },
      { name: 'x', secretName: 'missing-secret' },
      { name: 'x', extra: true },
    ];
    for (const body of bad) await expectRefused(t, () => create(factory, body), 400);
    const w = (await create(factory, { name: 'ok' })).json();
    await expectRefused(
      t,
      () => t.call('PATCH', `/factory/${factory}/webhooks/${w.uid}`, { deliveryIdHeader: 'Proxy-Authorization' }),
      400,
    );
    await expectRefused(t, () => t.call('PATCH', `/factory/${factory}/webhooks/${w.uid}`, {}), 400);
  });

  it('allows at most 20 webhooks per factory (409 limit_exceeded); a deletion frees a place', async () => {
    const factory = await newFactory();
    // Concurrent creations never pass the limit (losers of a race retry, then answer 409).
    const made = await Promise.all(Array.from({ length: 25 }, (_, i) => create(factory, { name: `w${i}` })));
    const created = made.filter((r) => r.statusCode === 201);
    expect(created.length).toBeLessThanOrEqual(20);
    for (const r of made.filter((x) => x.statusCode !== 201)) expectProblem(r, 409);
    for (let i = created.length; i < 20; i++) expect((await create(factory, { name: `s${i}` })).statusCode).toBe(201);
    await expectRefused(t, () => create(factory, { name: 'one more' }), 409, 'limit_exceeded');
    expect((await t.call('GET', `/factory/${factory}/webhooks`)).json().webhooks).toHaveLength(20);
    const first = created[0]!.json();
    await t.call('DELETE', `/factory/${factory}/webhooks/${first.uid}`);
    expect((await create(factory, { name: 'again' })).statusCode).toBe(201);
  });

  it('hides webhooks of other teams and unknown factories (404), and refuses agents... by 404 on unknown factory', async () => {
    const factory = await newFactory();
    const w = (await create(factory, { name: 'mine' })).json();
    const key = await strangerKey();
    await expectRefused(t, () => t.call('GET', `/factory/${factory}/webhooks`, undefined, key), 404);
    await expectRefused(t, () => t.call('GET', `/factory/${factory}/webhooks/${w.uid}`, undefined, key), 404);
    await expectRefused(t, () => t.call('POST', `/factory/${factory}/webhooks`, { name: 'x' }, key), 404);
    await expectRefused(t, () => t.call('PATCH', `/factory/${factory}/webhooks/${w.uid}`, { name: 'x' }, key), 404);
    await expectRefused(
      t,
      () => t.call('POST', `/factory/${factory}/webhooks/${w.uid}/rotate-secret`, undefined, key),
      404,
    );
    await expectRefused(
      t,
      () => t.call('GET', `/factory/${factory}/webhooks/${w.uid}/deliveries`, undefined, key),
      404,
    );
    await expectRefused(t, () => create('no-such-factory', { name: 'x' }), 404);
    await expectRefused(t, () => t.call('GET', `/factory/${factory}/webhooks`, undefined, null), 401);
  });
});

describe('team secrets', () => {
  it('creates, lists without values, backs a webhook by name, and deletes', async () => {
    const res = await t.call('POST', `/teams/${t.teamUid}/secrets`, {
      name: 'gh-hook',
      value: 'team-secret-value-xyz',
    });
    expect(res.statusCode, res.body).toBe(201);
    await expectRefused(
      t,
      () => t.call('POST', `/teams/${t.teamUid}/secrets`, { name: 'gh-hook', value: 'again-again' }),
      409,
    );
    const list = (await t.call('GET', `/teams/${t.teamUid}/secrets`)).json();
    expect(list.secrets).toEqual([{ name: 'gh-hook', created_at: expect.any(String) }]);
    expect(JSON.stringify((await t.rt.events.readStream(`teamsecrets-${t.teamUid}`)).map((e) => e.data))).not.toContain(
      'team-secret-value-xyz',
    );

    const factory = await newFactory();
    const w = (
      await create(factory, { name: 'GH', authMode: 'signature', signatureScheme: 'github', secretName: 'gh-hook' })
    ).json();
    expect(w).toMatchObject({ secretName: 'gh-hook', enabled: true, secret: null });

    const key = await strangerKey();
    await expectRefused(
      t,
      () => t.call('POST', `/teams/${t.teamUid}/secrets`, { name: 'x', value: 'yyyyyyyy' }, key),
      403,
    );
    expect((await t.call('DELETE', `/teams/${t.teamUid}/secrets/gh-hook`)).statusCode).toBe(204);
    await expectRefused(t, () => t.call('DELETE', `/teams/${t.teamUid}/secrets/gh-hook`), 404);
  });
});
