/**
 * Outbound webhooks through the real app and a local receiver, on a clock the test moves:
 * endpoints managed by team admins, deliveries signed with Standard Webhooks (verified with the
 * library), retried with one `webhook-id` until accepted, logged with status codes and latency;
 * an endpoint that keeps failing is disabled and its owner told in the inbox.
 */
import { v4 as uuidv4 } from 'uuid';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';
import { outsiderKey } from '../../helpers/conversation-fixtures.js';
import { sample, scrape } from '../../helpers/prometheus.js';
import { startReceiver } from '../../helpers/receiver.js';
import { eventually, newMember } from '../../helpers/task-fixtures.js';

const clock = manualClock('2026-05-04T09:00:00Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ OUTBOUND_ALLOWED_RANGES: '127.0.0.0/8', OUTBOUND_RETRY_BASE_SECONDS: '60' }, clock);
});
afterAll(() => t.close());

const base = () => `/teams/${t.teamUid}/outbound-webhooks`;
const register = async (body: Record<string, unknown>) => {
  const res = await t.call('POST', base(), body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { uid: string; secret: string; enabled: boolean };
};
const deliveries = async (uid: string, query = '') => {
  const res = await t.call('GET', `${base()}/${uid}/deliveries${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().deliveries as Array<{
    delivery_id: string;
    message_id: string;
    event_type: string;
    status: string;
    attempts: Array<{
      attempt: number;
      at: string;
      status_code: number | null;
      latency_ms: number;
      error: string | null;
    }>;
    payload: { type: string; data: Record<string, unknown> };
  }>;
};
const newRun = async (title = 'Nightly') => {
  const res = await t.call('POST', '/agent/runs', { prompt: 'Do it', title });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().run_id as string;
};

describe('managing endpoints', () => {
  it('creates one with a secret shown once, lists, reads, updates, rotates and deletes it', async () => {
    const created = await register({ url: 'http://127.0.0.1:9/x', event_types: ['run.*'], description: 'CI' });
    expect(created).toMatchObject({
      url: 'http://127.0.0.1:9/x',
      event_types: ['run.*'],
      enabled: true,
      owner_uid: t.adminUid,
      secret: expect.stringMatching(/^whsec_/),
    });
    const listed = (await t.call('GET', base())).json().outbound_webhooks;
    expect(listed).toContainEqual(expect.objectContaining({ uid: created.uid }));
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    const patched = await t.call('PATCH', `${base()}/${created.uid}`, { event_types: ['task.stage_changed'] });
    expect(patched.json()).toMatchObject({ event_types: ['task.stage_changed'] });
    expect(patched.json()).not.toHaveProperty('secret');
    const rotated = await t.call('POST', `${base()}/${created.uid}/rotate-secret`);
    expect(rotated.json().secret).toMatch(/^whsec_/);
    expect(rotated.json().secret).not.toBe(created.secret);
    expect((await t.call('DELETE', `${base()}/${created.uid}`)).statusCode).toBe(204);
    expectProblem(await t.call('GET', `${base()}/${created.uid}`), 404);
  });

  it('refuses non-admins, agents, strangers, bad bodies and addresses it may not reach, writing nothing', async () => {
    const member = await newMember(t);
    const body = { url: 'https://hooks.example.com/x', event_types: ['*'] };
    await expectRefused(t, () => t.call('POST', base(), body, member.key), 403);
    const agent = await t.call('POST', '/agent/identities', { name: 'Hook bot' });
    const agentKey = (await t.call('POST', `/agent/identities/${agent.json().uid}/api-keys`)).json().api_key;
    await expectRefused(t, () => t.call('POST', base(), body, agentKey), 403);
    const outsider = await outsiderKey(t);
    await expectRefused(t, () => t.call('POST', base(), body, outsider), 404);
    await expectRefused(t, () => t.call('POST', base(), { ...body, event_types: ['run.exploded'] }), 400);
    await expectRefused(t, () => t.call('POST', base(), { ...body, event_types: [] }), 400);
    await expectRefused(t, () => t.call('POST', base(), { ...body, url: 'ftp://example.com/x' }), 400);
    await expectRefused(t, () => t.call('POST', base(), { ...body, url: 'https://user:pw@example.com/x' }), 400);
    await expectRefused(t, () => t.call('POST', base(), { ...body, url: 'x'.repeat(3000) }), 400);
    // Link-local (cloud metadata) and private ranges are refused; only 127.0.0.0/8 is allowed here.
    for (const url of [
      'http://169.254.169.254/latest',
      'http://10.0.0.1/x',
      'http://[fe80::1]/x',
      'http://[::ffff:10.0.0.1]/',
    ]) {
      const problem = await expectRefused(t, () => t.call('POST', base(), { ...body, url }), 400);
      expect(problem.errors).toEqual([expect.objectContaining({ path: 'body.url' })]);
    }
  });

  it('a team has at most 20 endpoints (409 limit_exceeded)', async () => {
    const team = (await t.call('POST', '/teams', { name: `Busy ${uuidv4()}` })).json().uid;
    const at = `/teams/${team}/outbound-webhooks`;
    for (let i = 0; i < 20; i++)
      expect((await t.call('POST', at, { url: `https://h${i}.example.com/`, event_types: ['*'] })).statusCode).toBe(
        201,
      );
    await expectRefused(
      t,
      () => t.call('POST', at, { url: 'https://h.example.com/', event_types: ['*'] }),
      409,
      'limit_exceeded',
    );
  });
});

describe('who may learn what a URL resolves to', () => {
  // The default egress ranges here: `localhost` resolves to an address an endpoint may not have.
  let d: TestApp;
  beforeAll(async () => {
    d = await startTestApp();
  });
  afterAll(() => d.close());
  const URLS = ['http://localhost/hook', 'https://1.1.1.1/hook'];

  it('only a team admin: members and outsiders get one answer whatever the host resolves to (issue #30)', async () => {
    const hooks = `/teams/${d.teamUid}/outbound-webhooks`;
    const made = await d.call('POST', hooks, { url: URLS[1], event_types: ['run.blocked'] });
    expect(made.statusCode, made.body).toBe(201);
    const one = `${hooks}/${made.json().uid}`;
    // An admin is told: the address inside is refused, naming the field.
    for (const send of [
      () => d.call('POST', hooks, { url: URLS[0], event_types: ['run.blocked'] }),
      () => d.call('PATCH', one, { url: URLS[0] }),
    ]) {
      const problem = await expectRefused(d, send, 400);
      expect(problem.errors).toEqual([expect.objectContaining({ path: 'body.url' })]);
    }
    const callers = { member: [(await newMember(d)).key, 403], outsider: [await outsiderKey(d), 404] } as const;
    for (const [who, [key, status]] of Object.entries(callers))
      for (const url of URLS) {
        const create = await expectRefused(
          d,
          () => d.call('POST', hooks, { url, event_types: ['run.blocked'] }, key),
          status,
        );
        const update = await expectRefused(d, () => d.call('PATCH', one, { url }, key), status);
        expect([create.code, update.code], `${who}, ${url}`).toEqual(
          status === 403 ? ['not_authorized', 'not_authorized'] : ['resource_not_found', 'resource_not_found'],
        );
      }
  });
});

describe('deliveries', () => {
  it('signs each with Standard Webhooks and logs it; a failing receiver is retried with the same webhook-id', async () => {
    const receiver = await startReceiver((_r, i) => (i < 2 ? 500 : 204));
    try {
      const endpoint = await register({ url: receiver.url, event_types: ['run.queued'] });
      const runId = await newRun('Signed');
      // Each retry is due a minute or more later: move the clock until the receiver accepts.
      await eventually(async () => {
        clock.advance(5 * 60_000);
        return receiver.received.length >= 3 ? true : undefined;
      }, 15_000);
      const [delivery] = await eventually(async () => {
        const log = await deliveries(endpoint.uid);
        return log[0]?.status === 'delivered' ? log : undefined;
      });
      expect(delivery!.attempts.map((a) => a.status_code)).toEqual([500, 500, 204]);
      expect(delivery!.attempts.every((a) => a.latency_ms >= 0)).toBe(true);
      expect(delivery!.attempts[0]!.error).toMatch(/HTTP 500/);
      expect(delivery!.payload).toMatchObject({
        type: 'run.queued',
        data: { run_id: runId, state: 'QUEUED', title: 'Signed' },
      });

      const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
      expect(ids).toEqual(new Set([delivery!.message_id]));
      const wh = new Webhook(endpoint.secret);
      for (const r of receiver.received) {
        // The library refuses timestamps five minutes from now: verify each at its own time.
        const sentAt = Number(r.headers['webhook-timestamp']) * 1000;
        const payload = verifyAt(wh, r, sentAt);
        expect(payload).toMatchObject({ type: 'run.queued', data: { run_id: runId } });
      }
      expect(await deliveries(endpoint.uid, '?status=pending')).toEqual([]);
      const s = await scrape(t.app);
      expect(sample(s, 'shopfloor_outbound_deliveries_total', { outcome: 'retry' })).toBe(2);
      expect(sample(s, 'shopfloor_outbound_deliveries_total', { outcome: 'delivered' })).toBe(1);
      await t.call('DELETE', `${base()}/${endpoint.uid}`);
    } finally {
      await receiver.close();
    }
  });

  it('sends only subscribed types, and never follows a redirect', async () => {
    const elsewhere = await startReceiver();
    const receiver = await startReceiver(() => ({ status: 302, headers: { location: elsewhere.url } }));
    try {
      const endpoint = await register({ url: receiver.url, event_types: ['run.cancelled'] });
      const runId = await newRun('Redirected');
      expect((await t.call('POST', `/agent/runs/${runId}/cancel`)).statusCode).toBe(200);
      const [delivery] = await eventually(async () => {
        const log = await deliveries(endpoint.uid);
        return log[0]?.attempts.length ? log : undefined;
      });
      expect(delivery).toMatchObject({ event_type: 'run.cancelled', status: 'pending' });
      expect(delivery!.attempts[0]).toMatchObject({ status_code: 302, error: 'HTTP 302' });
      expect(receiver.received).toHaveLength(1);
      expect(elsewhere.received).toHaveLength(0);
      await t.call('DELETE', `${base()}/${endpoint.uid}`);
    } finally {
      await receiver.close();
      await elsewhere.close();
    }
  });

  it('disables an endpoint that fails for the whole window and tells its owner in the inbox', async () => {
    const receiver = await startReceiver(() => 503);
    try {
      const endpoint = await register({ url: receiver.url, event_types: ['run.*'] });
      await newRun('Never heard');
      // The first attempt at the time of scheduling; only then does the clock move.
      await eventually(async () => ((await deliveries(endpoint.uid))[0]?.attempts.length ? true : undefined));
      const disabled = await eventually(async () => {
        clock.advance(30 * 60_000);
        const doc = (await t.call('GET', `${base()}/${endpoint.uid}`)).json();
        return doc.enabled ? undefined : doc;
      }, 30_000);
      expect(disabled).toMatchObject({ enabled: false, disabled_reason: expect.stringMatching(/failed for/) });
      const [delivery] = await deliveries(endpoint.uid);
      expect(['failed', 'abandoned']).toContain(delivery!.status);
      // Retried for at least the day (OUTBOUND_RETRY_HOURS) before giving up.
      const times = delivery!.attempts.map((a) => Date.parse(a.at));
      expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(24 * 3_600_000);
      expect(delivery!.attempts.every((a) => a.status_code === 503)).toBe(true);
      expect(sample(await scrape(t.app), 'shopfloor_outbound_endpoints_disabled_total')).toBe(1);

      const told = await eventually(async () => {
        const items = (await t.call('GET', '/factory-inbox?limit=100')).json().notifications as Array<
          Record<string, unknown>
        >;
        return items.find((i) => i.outbound_webhook_uid === endpoint.uid);
      });
      expect(told).toMatchObject({ kind: 'webhook_disabled', factory_uid: null, urls: [receiver.url] });
      // Enabled again by a person: the notification clears.
      expect((await t.call('PATCH', `${base()}/${endpoint.uid}`, { enabled: true })).json()).toMatchObject({
        enabled: true,
        failing_since: null,
        disabled_reason: null,
      });
      await eventually(async () => {
        const items = (await t.call('GET', '/factory-inbox?limit=100')).json().notifications as Array<
          Record<string, unknown>
        >;
        return items.some((i) => i.outbound_webhook_uid === endpoint.uid) ? undefined : true;
      });
      await t.call('DELETE', `${base()}/${endpoint.uid}`);
    } finally {
      await receiver.close();
    }
  });

  it('the delivery log is for the team: 404 to others, 400 on a bad cursor or status', async () => {
    const endpoint = await register({ url: 'http://127.0.0.1:9/', event_types: ['task.*'] });
    const outsider = await outsiderKey(t);
    expectProblem(await t.call('GET', `${base()}/${endpoint.uid}/deliveries`, undefined, outsider), 404);
    expectProblem(await t.call('GET', `${base()}/${endpoint.uid}/deliveries?cursor=zzz`), 400, 'invalid_cursor');
    expectProblem(await t.call('GET', `${base()}/${endpoint.uid}/deliveries?status=lost`), 400);
  });
});

/** Verifies a received request as the receiver would have when it arrived. */
function verifyAt(wh: Webhook, r: { headers: Record<string, unknown>; body: string }, at: number) {
  const realNow = Date.now;
  Date.now = () => at;
  try {
    return wh.verify(r.body, {
      'webhook-id': String(r.headers['webhook-id']),
      'webhook-timestamp': String(r.headers['webhook-timestamp']),
      'webhook-signature': String(r.headers['webhook-signature']),
    });
  } finally {
    Date.now = realNow;
  }
}
