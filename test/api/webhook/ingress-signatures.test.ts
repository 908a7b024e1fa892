/**
 * Each provider's real signing code: the Standard Webhooks and GitHub libraries, and the documented
 * algorithms of Stripe (as stripe-node's generateTestHeaderString signs), Sentry, PagerDuty, Vercel.
 */
import { v4 as uuidv4 } from 'uuid';
import { createHmac } from 'node:crypto';
import { sign as signGithub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startTestApp, type TestApp } from '../../helpers/app.js';
import { automate, deliveryLog, factoryRuns, makeHook, post, type Hook } from './ingress-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const body = '{"event":"ping","id":"evt_1"}';
const tampered = '{"event":"ping","id":"evt_2"}';
const now = () => Math.floor(Date.now() / 1000);
const hex = (alg: string, secret: string, data: string) => createHmac(alg, secret).update(data).digest('hex');

type Signer = (secret: string, payload: string, at: number) => Promise<Record<string, string>>;

const signers: Record<string, Signer> = {
  standard_webhooks: async (secret, payload, at) => {
    const id = `msg_${uuidv4()}`;
    return {
      'webhook-id': id,
      'webhook-timestamp': String(at),
      'webhook-signature': new Webhook(secret).sign(id, new Date(at * 1000), payload),
    };
  },
  stripe: async (secret, payload, at) => ({
    'stripe-signature': `t=${at},v1=${hex('sha256', secret, `${at}.${payload}`)}`,
  }),
  github: async (secret, payload) => ({
    'x-hub-signature-256': await signGithub(secret, payload),
    'x-github-delivery': `gh-${uuidv4()}`,
  }),
  sentry: async (secret, payload, at) => ({
    'sentry-hook-signature': hex('sha256', secret, payload),
    'sentry-hook-timestamp': String(at),
  }),
  pagerduty: async (secret, payload) => ({ 'x-pagerduty-signature': `v1=${hex('sha256', secret, payload)}` }),
  vercel: async (secret, payload) => ({ 'x-vercel-signature': hex('sha1', secret, payload) }),
};

/** A signature webhook with a secret: generated for Standard Webhooks, supplied otherwise. */
async function signedHook(scheme: string, fields: Record<string, unknown> = {}): Promise<Hook & { key: string }> {
  if (scheme === 'standard_webhooks') {
    const hook = await makeHook(t, { authMode: 'signature', signatureScheme: scheme, ...fields });
    return { ...hook, key: hook.secret! };
  }
  const key = `whsec_${scheme}_supplied_secret`;
  return { ...(await makeHook(t, { authMode: 'signature', signatureScheme: scheme, secret: key, ...fields })), key };
}

const wrongKeyOf = (scheme: string) =>
  scheme === 'standard_webhooks'
    ? `whsec_${Buffer.from('another key entirely!').toString('base64')}`
    : 'another-secret-entirely';

/** The delivery log as [status, count] pairs, newest first. */
const logOf = async (hook: Hook) =>
  (await deliveryLog(t, hook, '?limit=100')).deliveries.map((d) => [d.status, d.count]);
const single = (status: string, n: number) => Array.from({ length: n }, () => [status, undefined]);

const send = (hook: Hook, payload: string, headers: Record<string, string>) =>
  post(t, `/webhooks/w/${hook.uid}`, payload, headers);

describe.each(Object.keys(signers))('%s signatures', (scheme) => {
  const sign = signers[scheme]!;

  it('accepts a valid signature and refuses a tampered body, a missing signature and a wrong secret with 401', async () => {
    const hook = await signedHook(scheme);
    const ok = await send(hook, body, await sign(hook.key, body, now()));
    expect(ok.statusCode, ok.body).toBe(202);
    expectProblem(await send(hook, tampered, await sign(hook.key, body, now())), 401, 'authentication_failed');
    expectProblem(await send(hook, body, {}), 401);
    expectProblem(await send(hook, body, await sign(wrongKeyOf(scheme), body, now())), 401);
    const statuses = (await deliveryLog(t, hook)).deliveries.map((d) => d.status);
    expect(statuses).toEqual(['rejected_auth', 'rejected_auth', 'rejected_auth', 'accepted']);
  });

  it('refuses a signature made with the secret in force before a rotation', async () => {
    const hook = await signedHook(scheme);
    const newKey = scheme === 'standard_webhooks' ? undefined : `${hook.key}_rotated`;
    const rotated = await t.call(
      'POST',
      `/factory/${hook.factory}/webhooks/${hook.uid}/rotate-secret`,
      newKey ? { secret: newKey } : {},
    );
    expect(rotated.statusCode, rotated.body).toBe(200);
    expectProblem(await send(hook, body, await sign(hook.key, body, now())), 401);
    expect((await send(hook, body, await sign(newKey ?? rotated.json().secret, body, now()))).statusCode).toBe(202);
  });

  it("a stranger's 40 badly signed posts neither lock the real sender out nor fill the delivery log", async () => {
    const hook = await signedHook(scheme);
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++)
      statuses.push((await send(hook, body, await sign(wrongKeyOf(scheme), body, now()))).statusCode);
    // The first 30 a minute (the failed-authentication budget) are 401, the rest 429.
    expect(statuses).toEqual([...Array(30).fill(401), ...Array(10).fill(429)]);
    const ok = await send(hook, body, await sign(hook.key, body, now()));
    expect(ok.statusCode, ok.body).toBe(202);
    expect(await logOf(hook)).toEqual([['accepted', undefined], ['rejected_auth', 10], ...single('rejected_auth', 30)]);
  });
});

describe('strangers sending bodies too large to check', () => {
  it('are answered 413 however many they send, and counted past the failed-authentication budget', async () => {
    const hook = await signedHook('github');
    const huge = `"${'x'.repeat(262_144)}"`;
    for (let i = 0; i < 35; i++)
      expectProblem(await send(hook, huge, await signers.github!(wrongKeyOf('github'), huge, now())), 413);
    // The budget is shared with failed signatures: a wrong one is slowed now, the right one never.
    expectProblem(await send(hook, body, await signers.github!(wrongKeyOf('github'), body, now())), 429);
    expect((await send(hook, body, await signers.github!(hook.key, body, now()))).statusCode).toBe(202);
    const log = await logOf(hook);
    expect(log[0]).toEqual(['accepted', undefined]);
    // The two counts, in either order (their last refusals may share a millisecond).
    expect(log.slice(1, 3)).toEqual(
      expect.arrayContaining([
        ['rejected_auth', 1],
        ['rejected_too_large', 5],
      ]),
    );
    expect(log.slice(3)).toEqual(single('rejected_too_large', 30));
  });
});

describe('signature age and provider specifics', () => {
  it.each(['standard_webhooks', 'stripe'])(
    '%s: a signature older than five minutes is refused, a fresh one taken',
    async (scheme) => {
      const hook = await signedHook(scheme);
      expectProblem(await send(hook, body, await signers[scheme]!(hook.key, body, now() - 301)), 401);
      expect((await send(hook, body, await signers[scheme]!(hook.key, body, now() - 240))).statusCode).toBe(202);
    },
  );

  it('Standard Webhooks accepts the Svix header names', async () => {
    const hook = await signedHook('standard_webhooks');
    const h = await signers.standard_webhooks!(hook.key, body, now());
    const svix = {
      'svix-id': h['webhook-id']!,
      'svix-timestamp': h['webhook-timestamp']!,
      'svix-signature': h['webhook-signature']!,
    };
    expect((await send(hook, body, svix)).statusCode).toBe(202);
  });

  it('Stripe accepts any of several v1 signatures', async () => {
    const hook = await signedHook('stripe');
    const at = now();
    const header = `t=${at},v1=${hex('sha256', 'old-secret', `${at}.${body}`)},v1=${hex('sha256', hook.key, `${at}.${body}`)}`;
    expect((await send(hook, body, { 'stripe-signature': header })).statusCode).toBe(202);
  });

  it('a provider webhook created without its secret is disabled (404) until the secret is given', async () => {
    const hook = await makeHook(t, { authMode: 'signature', signatureScheme: 'vercel' });
    expectProblem(await send(hook, body, await signers.vercel!('later-secret', body, now())), 404);
    await t.call('PATCH', `/factory/${hook.factory}/webhooks/${hook.uid}`, { secret: 'later-secret' });
    expect((await send(hook, body, await signers.vercel!('later-secret', body, now()))).statusCode).toBe(202);
  });

  it('a webhook backed by a team secret verifies with its current value', async () => {
    await t.call('POST', `/teams/${t.teamUid}/secrets`, { name: 'sentry-secret', value: 'sentry-client-secret' });
    const hook = await makeHook(t, { authMode: 'signature', signatureScheme: 'sentry', secretName: 'sentry-secret' });
    expect((await send(hook, body, await signers.sentry!('sentry-client-secret', body, now()))).statusCode).toBe(202);
    await t.call('DELETE', `/teams/${t.teamUid}/secrets/sentry-secret`);
    expectProblem(await send(hook, tampered, await signers.sentry!('sentry-client-secret', tampered, now())), 401);
  });
});

describe('a signed delivery sent again is a Duplicate, whatever delivery headers come with it', () => {
  /** Every header that would name the delivery were it not signed, with fresh values each time. */
  const freshIds = () => {
    const n = uuidv4();
    return { 'x-event-id': `cfg-${n}`, 'x-service-delivery-id': `svc-${n}`, 'x-github-delivery': `gh-${n}` };
  };
  const statusesOf = async (hook: Hook, ids: string[]) => {
    const byId = new Map((await deliveryLog(t, hook)).deliveries.map((d) => [d.delivery_id, d]));
    return ids.map((id) => byId.get(id));
  };

  it('Stripe: the event id in the signed body is the identity, even when a retry changes other fields', async () => {
    const hook = await signedHook('stripe', { deliveryIdHeader: 'X-Event-Id' });
    await automate(t, hook);
    const event = '{"id":"evt_replayed","type":"charge.succeeded","pending_webhooks":2}';
    const headers = await signers.stripe!(hook.key, event, now());
    const first = await send(hook, event, { ...headers, ...freshIds() });
    expect(first.statusCode, first.body).toBe(202);
    // The captured request, replayed as it was and under other delivery headers.
    const replay = await send(hook, event, { ...headers, ...freshIds() });
    // Stripe's own retry: signed again later, one field changed, the same event id.
    const retried = '{"id":"evt_replayed","type":"charge.succeeded","pending_webhooks":1}';
    const retry = await send(hook, retried, { ...(await signers.stripe!(hook.key, retried, now())), ...freshIds() });
    const other = '{"id":"evt_other","type":"charge.succeeded","pending_webhooks":2}';
    const next = await send(hook, other, { ...(await signers.stripe!(hook.key, other, now())), ...freshIds() });
    expect([replay, retry, next].map((r) => r.statusCode)).toEqual([202, 202, 202]);

    const [a, b, c, d] = await statusesOf(
      hook,
      [first, replay, retry, next].map((r) => r.json().delivery_id),
    );
    expect(a).toMatchObject({ status: 'accepted' });
    expect(b).toMatchObject({ status: 'duplicate', duplicate_of: a!.delivery_id });
    expect(c).toMatchObject({ status: 'duplicate', duplicate_of: a!.delivery_id });
    expect(d).toMatchObject({ status: 'accepted' });
    const runs = await factoryRuns(t, hook);
    expect(runs.map((r) => r.metadata.delivery_id).sort()).toEqual([a!.delivery_id, d!.delivery_id].sort());
  });

  it('Stripe: a body without an event id is known by its hash; a replay older than five minutes is refused', async () => {
    const hook = await signedHook('stripe');
    const event = '{"no_id":true}';
    const first = await send(hook, event, { ...(await signers.stripe!(hook.key, event, now())), ...freshIds() });
    const again = await send(hook, event, { ...(await signers.stripe!(hook.key, event, now())), ...freshIds() });
    const [a, b] = await statusesOf(hook, [first.json().delivery_id, again.json().delivery_id]);
    expect(b).toMatchObject({ status: 'duplicate', duplicate_of: a!.delivery_id });
    expectProblem(await send(hook, event, await signers.stripe!(hook.key, event, now() - 301)), 401);
  });

  it('Standard Webhooks: the signed message id is the identity, under webhook-* or svix-* names', async () => {
    const hook = await signedHook('standard_webhooks', { deliveryIdHeader: 'X-Event-Id' });
    await automate(t, hook);
    const headers = await signers.standard_webhooks!(hook.key, body, now());
    const first = await send(hook, body, { ...headers, ...freshIds() });
    expect(first.statusCode, first.body).toBe(202);
    const replay = await send(hook, body, { ...headers, ...freshIds() });
    const svix = await send(hook, body, {
      'svix-id': headers['webhook-id']!,
      'svix-timestamp': headers['webhook-timestamp']!,
      'svix-signature': headers['webhook-signature']!,
      ...freshIds(),
    });
    // The same body as another message (its own id, signed) is a delivery of its own.
    const next = await send(hook, body, {
      ...(await signers.standard_webhooks!(hook.key, body, now())),
      ...freshIds(),
    });
    const [a, b, c, d] = await statusesOf(
      hook,
      [first, replay, svix, next].map((r) => r.json().delivery_id),
    );
    expect(a).toMatchObject({ status: 'accepted' });
    expect(b).toMatchObject({ status: 'duplicate', duplicate_of: a!.delivery_id });
    expect(c).toMatchObject({ status: 'duplicate', duplicate_of: a!.delivery_id });
    expect(d).toMatchObject({ status: 'accepted' });
    const runs = await factoryRuns(t, hook);
    expect(runs.map((r) => r.metadata.delivery_id).sort()).toEqual([a!.delivery_id, d!.delivery_id].sort());
    // A message id other than the one signed fails the signature.
    expectProblem(await send(hook, body, { ...headers, 'webhook-id': 'msg_forged' }), 401);
  });

  it.each(['github', 'sentry', 'pagerduty', 'vercel'])(
    '%s: only the body is signed, so the body is the identity; its delivery headers are not trusted',
    async (scheme) => {
      const hook = await signedHook(scheme, { deliveryIdHeader: 'X-Event-Id' });
      const providerIds = {
        'x-github-delivery': 'd-1',
        'request-id': 'd-1',
        'x-webhook-id': 'd-1',
        'x-event-id': 'd-1',
      };
      const headers = await signers[scheme]!(hook.key, body, now());
      const first = await send(hook, body, { ...headers, ...providerIds });
      const redelivered = await send(hook, body, { ...headers, ...freshIds() });
      // Another body under the same delivery headers is another delivery.
      const otherBody = '{"event":"pong"}';
      const other = await send(hook, otherBody, {
        ...(await signers[scheme]!(hook.key, otherBody, now())),
        ...providerIds,
      });
      const [a, b, c] = await statusesOf(
        hook,
        [first, redelivered, other].map((r) => r.json().delivery_id),
      );
      expect(a).toMatchObject({ status: 'accepted' });
      expect(b).toMatchObject({ status: 'duplicate', duplicate_of: a!.delivery_id });
      expect(c).toMatchObject({ status: 'accepted' });
    },
  );
});
