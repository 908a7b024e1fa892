import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startTestApp, type TestApp } from '../../helpers/app.js';
import { deliveryLog, makeHook, post, postToken } from './ingress-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_FAILED_AUTH_PER_MINUTE: '5' });
});
afterAll(() => t.close());

describe('webhook ingress: token modes, statuses, log', () => {
  it('accepts a token delivery with 202 {delivery_id} and logs it with its payload; refuses bad credentials with 401', async () => {
    const hook = await makeHook(t);
    const res = await postToken(t, hook, '{"order":1}');
    expect(res.statusCode, res.body).toBe(202);
    const { delivery_id } = res.json();
    expect(typeof delivery_id).toBe('string');

    expectProblem(await postToken(t, hook, '{"order":2}', { authorization: 'Bearer wrong' }), 401);
    expectProblem(await post(t, `/webhooks/w/${hook.uid}`, '{"order":3}'), 401);
    const log = await deliveryLog(t, hook);
    expect(log.deliveries.map((d) => d.status)).toEqual(['rejected_auth', 'rejected_auth', 'accepted']);
    expect(log.deliveries[2]).toEqual({
      delivery_id,
      status: 'accepted',
      label: 'Accepted',
      size_bytes: 11,
      received_at: expect.any(String),
      payload: { order: 1 },
    });
    expect(log.deliveries[0]).not.toHaveProperty('payload');
    expect(log.deliveries[0]!.label).toBe('Rejected (auth)');
  });

  it('Content-Type is not enforced; any JSON value is accepted; invalid JSON is 400 and logged', async () => {
    const hook = await makeHook(t);
    for (const [body, type] of [
      ['[1,2]', 'text/plain'],
      ['"text"', 'application/x-www-form-urlencoded'],
      ['42', ''],
      ['null', 'application/octet-stream'],
    ] as const) {
      const res = await post(t, `/webhooks/w/${hook.uid}`, body, {
        authorization: `Bearer ${hook.secret}`,
        ...(type ? { 'content-type': type } : {}),
      });
      expect(res.statusCode, `${body} ${type}: ${res.body}`).toBe(202);
    }
    expectProblem(await postToken(t, hook, '{"broken":'), 400, 'invalid_json');
    expectProblem(await postToken(t, hook, ''), 400, 'invalid_json');
    const log = await deliveryLog(t, hook);
    expect(log.deliveries.slice(0, 2).map((d) => [d.status, d.label])).toEqual([
      ['rejected_invalid_json', 'Rejected (invalid JSON)'],
      ['rejected_invalid_json', 'Rejected (invalid JSON)'],
    ]);
  });

  it('url_token: the token is the last path segment; without it or with a wrong one 401', async () => {
    const hook = await makeHook(t, { authMode: 'url_token' });
    expect((await post(t, `/webhooks/w/${hook.uid}/${hook.secret}`, '{}')).statusCode).toBe(202);
    expectProblem(await post(t, `/webhooks/w/${hook.uid}`, '{}'), 401);
    expectProblem(await post(t, `/webhooks/w/${hook.uid}/wrong-token`, '{}'), 401);
    // A bearer header does not open a url_token webhook.
    expectProblem(await post(t, `/webhooks/w/${hook.uid}`, '{}', { authorization: `Bearer ${hook.secret}` }), 401);
  });

  it('unknown, disabled and deleted webhooks answer 404 and log nothing; only POST is allowed', async () => {
    const hook = await makeHook(t);
    expectProblem(await postToken(t, { ...hook, uid: 'no-such-hook' }, '{}'), 404);
    expectProblem(
      await post(t, `/webhooks/w/${hook.uid}/extra-segment`, '{}', { authorization: `Bearer ${hook.secret}` }),
      404,
    );
    expect((await t.app.inject({ method: 'GET', url: `/webhooks/w/${hook.uid}` })).statusCode).toBe(405);
    await t.call('PATCH', `/factory/${hook.factory}/webhooks/${hook.uid}`, { enabled: false });
    const before = await t.head();
    expectProblem(await postToken(t, hook, '{}'), 404);
    expect(await t.head()).toBe(before);
    await t.call('PATCH', `/factory/${hook.factory}/webhooks/${hook.uid}`, { enabled: true });
    expect((await postToken(t, hook, '{}')).statusCode).toBe(202);
    await t.call('DELETE', `/factory/${hook.factory}/webhooks/${hook.uid}`);
    expectProblem(await postToken(t, hook, '{"after":"delete"}'), 404);
  });

  it('rotation invalidates the old secret at once', async () => {
    const hook = await makeHook(t);
    const rotated = (await t.call('POST', `/factory/${hook.factory}/webhooks/${hook.uid}/rotate-secret`)).json()
      .secret as string;
    expectProblem(await postToken(t, hook, '{}'), 401);
    expect((await postToken(t, { ...hook, secret: rotated }, '{}')).statusCode).toBe(202);
  });

  it('the failed-authentication budget slows strangers with 429 and Retry-After, never the right credential; it is apart from deliveries', async () => {
    const hook = await makeHook(t);
    const wrong = (mode: 'header' | 'path') =>
      mode === 'header'
        ? postToken(t, hook, '{}', { authorization: 'Bearer nope' })
        : post(t, `/webhooks/w/${hook.uid}`, '{}');
    for (let i = 0; i < 5; i++) expectProblem(await wrong(i % 2 ? 'header' : 'path'), 401);
    const limited = await wrong('header');
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await postToken(t, hook, '{"n":1}')).statusCode).toBe(202);
    expectProblem(await wrong('path'), 429, 'rate_limited');
    expect((await postToken(t, hook, '{"n":2}')).statusCode).toBe(202);
    // Another webhook keeps its own budgets.
    const other = await makeHook(t);
    expectProblem(await postToken(t, other, '{}', { authorization: 'Bearer nope' }), 401);
  });

  it('past the budget, refusals are counted rather than logged: one entry says how many, before the next', async () => {
    // An app of its own, for its process log (JSON lines) to hold this test's lines only.
    const logged: Array<Record<string, unknown>> = [];
    const collect = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) logged.push(JSON.parse(line));
        done();
      },
    });
    const c = await startTestApp({ WEBHOOK_FAILED_AUTH_PER_MINUTE: '5', LOG_LEVEL: 'info' }, undefined, [], collect);
    try {
      const hook = await makeHook(c, { authMode: 'url_token' });
      for (let i = 0; i < 25; i++) await post(c, `/webhooks/w/${hook.uid}/wrong-token-${i}`, '{"n":1}');
      expect((await post(c, `/webhooks/w/${hook.uid}/${hook.secret}`, '{"n":2}')).statusCode).toBe(202);
      const entries = (await deliveryLog(c, hook, '?limit=100')).deliveries;
      expect(entries.map((d) => [d.status, d.count])).toEqual([
        ['accepted', undefined],
        ['rejected_auth', 20],
        ...Array.from({ length: 5 }, () => ['rejected_auth', undefined]),
      ]);
      expect(entries[1]).toMatchObject({ label: 'Rejected (auth)', size_bytes: 20 * 7 });
      // Counted once: the next refusal is an entry of its own, before the next delivery.
      expectProblem(await post(c, `/webhooks/w/${hook.uid}/wrong`, '{}'), 429);
      expect((await post(c, `/webhooks/w/${hook.uid}/${hook.secret}`, '{"n":3}')).statusCode).toBe(202);
      const after = (await deliveryLog(c, hook, '?limit=3')).deliveries;
      expect(after.map((d) => [d.status, d.count])).toEqual([
        ['accepted', undefined],
        ['rejected_auth', 1],
        ['accepted', undefined],
      ]);
      // The process log: a request line for each refusal within the budget, throttled lines counting the rest.
      const counted = () => logged.filter((l) => l.kind === 'ingress_counted').reduce((n, l) => n + Number(l.count), 0);
      await expect.poll(counted, { timeout: 5000 }).toBe(21);
      const requests = logged.filter((l) => l.msg === 'request' && String(l.url).startsWith('/webhooks/'));
      expect(requests.map((l) => l.status).sort()).toEqual([202, 202, 401, 401, 401, 401, 401]);
    } finally {
      await c.close();
    }
  });

  it('more than 60 deliveries a minute per webhook answer 429 with Retry-After (duplicates count too)', async () => {
    const hook = await makeHook(t);
    for (let i = 0; i < 60; i++) expect((await postToken(t, hook, `{"n":${i}}`)).statusCode).toBe(202);
    const limited = await postToken(t, hook, '{"n":60}');
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
  });

  it('pages the delivery log newest first with a cursor', async () => {
    const hook = await makeHook(t);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await postToken(t, hook, `{"n":${i}}`)).json().delivery_id);
    const first = await deliveryLog(t, hook, '?limit=2');
    expect(first.deliveries.map((d) => d.delivery_id)).toEqual([ids[4], ids[3]]);
    expect(first.page_info.has_next_page).toBe(true);
    const second = await deliveryLog(t, hook, `?limit=2&cursor=${encodeURIComponent(first.page_info.next_cursor!)}`);
    expect(second.deliveries.map((d) => d.delivery_id)).toEqual([ids[2], ids[1]]);
    expectProblem(await t.call('GET', `/factory/${hook.factory}/webhooks/${hook.uid}/deliveries?cursor=garbage`), 400);
  });
});

describe('delivery identity', () => {
  it('uses the configured header first, then X-Service-Delivery-Id, then the body hash; a repeat is a logged Duplicate', async () => {
    const hook = await makeHook(t, { deliveryIdHeader: 'X-Event-Id' });
    const a = (await postToken(t, hook, '{"a":1}', { 'x-event-id': 'evt-1', 'x-service-delivery-id': 'svc-1' })).json()
      .delivery_id;
    // Same configured id, other body and other service id: a duplicate.
    const b = await postToken(t, hook, '{"a":2}', { 'x-event-id': 'evt-1', 'x-service-delivery-id': 'svc-2' });
    expect(b.statusCode).toBe(202);
    expect(b.json().delivery_id).not.toBe(a);
    // Without the configured header, the service header decides.
    const c = (await postToken(t, hook, '{"a":3}', { 'x-service-delivery-id': 'svc-1' })).json().delivery_id;
    const d = (await postToken(t, hook, '{"a":4}', { 'x-service-delivery-id': 'svc-1' })).json().delivery_id;
    // Without any id, identical bodies are duplicates and different ones are not.
    const e = (await postToken(t, hook, '{"same":true}')).json().delivery_id;
    const f = (await postToken(t, hook, '{"same":true}')).json().delivery_id;
    const g = (await postToken(t, hook, '{"same":false}')).json().delivery_id;
    const log = (await deliveryLog(t, hook)).deliveries;
    const byId = new Map(log.map((x) => [x.delivery_id, x]));
    expect(byId.get(a)).toMatchObject({ status: 'accepted' });
    expect(byId.get(b.json().delivery_id)).toMatchObject({ status: 'duplicate', label: 'Duplicate', duplicate_of: a });
    expect(byId.get(b.json().delivery_id)).not.toHaveProperty('payload');
    expect(byId.get(c)).toMatchObject({ status: 'accepted' });
    expect(byId.get(d)).toMatchObject({ status: 'duplicate', duplicate_of: c });
    expect(byId.get(e)).toMatchObject({ status: 'accepted' });
    expect(byId.get(f)).toMatchObject({ status: 'duplicate', duplicate_of: e });
    expect(byId.get(g)).toMatchObject({ status: 'accepted' });
  });

  it('50 identical deliveries at once: all 202 with their own delivery_id, exactly one DeliveryAccepted', async () => {
    const hook = await makeHook(t);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => postToken(t, hook, '{"burst":true}', { 'x-service-delivery-id': 'burst-1' })),
    );
    expect(answers.map((r) => r.statusCode)).toEqual(Array(50).fill(202));
    expect(new Set(answers.map((r) => r.json().delivery_id)).size).toBe(50);
    const log = (await deliveryLog(t, hook, '?limit=100')).deliveries;
    expect(log.filter((d) => d.status === 'accepted')).toHaveLength(1);
    expect(log.filter((d) => d.status === 'duplicate')).toHaveLength(49);
    const accepted = log.find((d) => d.status === 'accepted')!.delivery_id;
    expect(log.filter((d) => d.status === 'duplicate').every((d) => d.duplicate_of === accepted)).toBe(true);
  });
});
