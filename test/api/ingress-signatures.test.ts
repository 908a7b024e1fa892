/**
 * Each provider's real signing code: the Standard Webhooks and GitHub libraries, and the documented
 * algorithms of Stripe (as stripe-node's generateTestHeaderString signs), Sentry, PagerDuty, Vercel.
 */
import { createHmac } from 'node:crypto';
import { sign as signGithub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startTestApp, type TestApp } from '../helpers/app.js';
import { deliveryLog, makeHook, post, type Hook } from './ingress-helpers.js';

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
    const id = `msg_${Math.random()}`;
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
    'x-github-delivery': `gh-${Math.random()}`,
  }),
  sentry: async (secret, payload, at) => ({
    'sentry-hook-signature': hex('sha256', secret, payload),
    'sentry-hook-timestamp': String(at),
  }),
  pagerduty: async (secret, payload) => ({ 'x-pagerduty-signature': `v1=${hex('sha256', secret, payload)}` }),
  vercel: async (secret, payload) => ({ 'x-vercel-signature': hex('sha1', secret, payload) }),
};

/** A signature webhook with a secret: generated for Standard Webhooks, supplied otherwise. */
async function signedHook(scheme: string): Promise<Hook & { key: string }> {
  if (scheme === 'standard_webhooks') {
    const hook = await makeHook(t, { authMode: 'signature', signatureScheme: scheme });
    return { ...hook, key: hook.secret! };
  }
  const key = `whsec_${scheme}_supplied_secret`;
  return { ...(await makeHook(t, { authMode: 'signature', signatureScheme: scheme, secret: key })), key };
}

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
    const wrongKey =
      scheme === 'standard_webhooks'
        ? `whsec_${Buffer.from('another key entirely!').toString('base64')}`
        : 'another-secret-entirely';
    expectProblem(await send(hook, body, await sign(wrongKey, body, now())), 401);
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

  it('GitHub: X-GitHub-Delivery is the identity, so a redelivery is a Duplicate', async () => {
    const hook = await signedHook('github');
    const headers = { ...(await signers.github!(hook.key, body, now())), 'x-github-delivery': 'delivery-42' };
    const first = (await send(hook, body, headers)).json().delivery_id;
    const again = (
      await send(hook, '{"other":"body"}', {
        ...(await signers.github!(hook.key, '{"other":"body"}', now())),
        'x-github-delivery': 'delivery-42',
      })
    ).json().delivery_id;
    const log = (await deliveryLog(t, hook)).deliveries;
    expect(log.find((d) => d.delivery_id === again)).toMatchObject({ status: 'duplicate', duplicate_of: first });
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
