/**
 * The Idempotency-Key header (issue #17: "a client that times out on a create and retries
 * creates it twice"), in the real app on real SQLite files: a retry answers the first answer and
 * creates nothing more, across concurrent requests, app instances, restarts and 24 hours.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyReply, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { manualClock } from '../../src/clock.js';
import { feature } from '../../src/feature.js';
import { idempotencyStream, KEY_WINDOW_MS, LEASE_MS } from '../../src/http/idempotency-record.js';
import { Conflict, Forbidden, ReadModelFailed } from '../../src/kernel/errors.js';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../helpers/app.js';

const clock = manualClock('2026-04-01T09:00:00Z');

/** Routes whose answers the platform produces on demand, counting how often their handler ran. */
let calls = 0;
const answers = ['created', 'empty', 'failure', 'busy', 'saved_unread', 'refused'] as const;
const probe = feature({
  name: 'idempotency-probe',
  routes: [
    (api) => {
      const handler = async (req: { body: { answer: (typeof answers)[number] } }, reply: FastifyReply) => {
        calls++;
        switch (req.body.answer) {
          case 'created':
            return reply.code(201).send({ calls });
          case 'empty':
            return reply.code(204).send();
          case 'failure':
            throw new Error('the handler failed');
          case 'busy':
            throw new Conflict('busy, retry', 'conflict', true);
          case 'saved_unread':
            throw new ReadModelFailed(['probe']);
          case 'refused':
            throw new Forbidden('not for you');
        }
      };
      const schema = {
        body: z.object({ answer: z.enum(answers) }).strict(),
        response: { 201: z.object({ calls: z.number() }), 204: z.undefined() },
      };
      api.post('/probe', { schema, config: { idempotent: true } }, handler);
      api.post('/probe/plain', { schema }, handler);
    },
  ],
});

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, clock, [probe]);
});
afterAll(() => t.close());

const keyed = (key: string, headers: Record<string, string> = {}) => ({ 'idempotency-key': key, ...headers });
const createFactory = (name: string, key: string, apiKey?: string, headers?: Record<string, string>) =>
  t.call('POST', '/factory', { name }, apiKey, keyed(key, headers));
const factoriesNamed = async (name: string, apiKey?: string, headers?: Record<string, string>) =>
  (
    (await t.call('GET', `/factory?search=${encodeURIComponent(name)}`, undefined, apiKey, headers)).json()
      .factories as Array<{
      name: string;
    }>
  ).filter((f) => f.name === name);
const recordOf = (key: string, principal = `user:${t.adminUid}`) =>
  t.rt.events.readStream(idempotencyStream(principal, key));

const expectReplayOf = (first: LightMyRequestResponse, retry: LightMyRequestResponse) => {
  expect(retry.statusCode, retry.body).toBe(first.statusCode);
  expect(retry.body).toBe(first.body);
  expect(retry.headers['content-type']).toBe(first.headers['content-type']);
  expect(retry.headers['idempotent-replayed']).toBe('true');
  expect(first.headers['idempotent-replayed']).toBeUndefined();
};

describe('Idempotency-Key on creates', () => {
  it('answers a retry with the first answer and creates the resource once', async () => {
    const key = randomUUID();
    const first = await t.call('POST', '/factory', { name: 'Once only', alias: 'once' }, undefined, keyed(key));
    expect(first.statusCode, first.body).toBe(201);
    const head = await t.head();

    // The same body with other whitespace and key order is the same request.
    const retry = await t.call('POST', '/factory', ' {"alias":"once",  "name" : "Once only"} ', undefined, keyed(key));
    expectReplayOf(first, retry);
    expect(await t.head()).toBe(head);
    expect(await factoriesNamed('Once only')).toHaveLength(1);

    // The log holds the reservation and the answer, sealed.
    const record = await recordOf(key);
    expect(record.map((e) => e.type)).toEqual(['IdempotencyKeyReserved', 'IdempotentAnswerRecorded']);
    expect(record[0]!.data).toMatchObject({ method: 'POST', route: '/api/v1/factory' });
    expect(JSON.stringify(record.map((e) => e.data))).not.toContain('Once only');
    expect(record[1]!.metadata.request_id).toBe(record[0]!.metadata.request_id);
  });

  it('answers a body the schema refuses without reserving the key, so the corrected request may use it', async () => {
    const key = randomUUID();
    await expectRefused(t, () => createFactory('', key), 400, 'invalid_request');
    expect(await recordOf(key)).toEqual([]);
    expect((await createFactory('Corrected', key)).statusCode).toBe(201);
  });

  it('refuses the key with another body, path or team (422) and writes nothing', async () => {
    const key = randomUUID();
    expect((await createFactory('Original', key)).statusCode).toBe(201);
    const other = (await t.call('POST', '/teams', { name: 'Other team' })).json().uid as string;

    const reused = await expectRefused(t, () => createFactory('Different', key), 422, 'idempotency_key_reused');
    expect(reused.detail).toMatch(/another request/);
    await expectRefused(t, () => t.call('POST', '/agent/runs', { prompt: 'hi' }, undefined, keyed(key)), 422);
    await expectRefused(t, () => createFactory('Original', key, undefined, { 'x-service-team-uid': other }), 422);
    expect(await factoriesNamed('Different')).toEqual([]);
    expect(await factoriesNamed('Original', undefined, { 'x-service-team-uid': other })).toEqual([]);
  });

  it('gives one of several concurrent requests with one key the create, the others 409 or its answer', async () => {
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 6 }, () => createFactory('Raced', key)));
    const created = answers.filter((a) => a.statusCode === 201);
    const busy = answers.filter((a) => a.statusCode === 409);
    expect(created.length + busy.length, answers.map((a) => a.body).join('\n')).toBe(answers.length);
    expect(created.filter((a) => a.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(new Set(created.map((a) => a.body)).size).toBe(1);
    for (const b of busy) expect(expectProblem(b, 409, 'idempotency_key_in_use').retryable).toBe(true);
    expect(await factoriesNamed('Raced')).toHaveLength(1);
    // Retried after the first was answered, every one of them gets its answer.
    expectReplayOf(created.find((a) => !a.headers['idempotent-replayed'])!, await createFactory('Raced', key));
  });

  it('holds across two app instances on one store, each with its own process state', async () => {
    const other = await startTestApp({ DATA_DIR: t.dir }, clock);
    try {
      const key = randomUUID();
      const send = (app: TestApp) => app.call('POST', '/factory', { name: 'Two servers' }, undefined, keyed(key));
      const answers = await Promise.all([send(t), send(other), send(t), send(other)]);
      expect(answers.every((a) => a.statusCode === 201 || a.statusCode === 409)).toBe(true);
      expect(answers.filter((a) => a.statusCode === 201 && !a.headers['idempotent-replayed'])).toHaveLength(1);
      expect(await factoriesNamed('Two servers')).toHaveLength(1);
      expect((await send(other)).headers['idempotent-replayed']).toBe('true');
    } finally {
      await other.stop();
    }
  });

  it("keeps each principal's keys apart", async () => {
    const member = await t.addMember(t.teamUid, { email: `idem-${randomUUID()}@example.com` });
    const key = 'order-1';
    const mine = await createFactory('Mine', key);
    const theirs = await createFactory('Theirs', key, member.api_key);
    expect(mine.statusCode).toBe(201);
    expect(theirs.statusCode, theirs.body).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json().uid).not.toBe(mine.json().uid);
    expectReplayOf(theirs, await createFactory('Theirs', key, member.api_key));
  });

  it('lets the key create anew once 24 hours have passed since it was first used', async () => {
    const key = randomUUID();
    const first = await createFactory('Daily', key);
    clock.advance(KEY_WINDOW_MS - 1);
    expectReplayOf(first, await createFactory('Daily', key));
    // Another body within the window is refused, and after it is a new request like any other.
    await expectRefused(t, () => createFactory('Daily, changed', key), 422);
    clock.advance(1);
    const again = await createFactory('Daily', key);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.json().uid).not.toBe(first.json().uid);
    expect(await factoriesNamed('Daily')).toHaveLength(2);
    expectReplayOf(again, await createFactory('Daily', key));
  });

  it('replays after a restart on the same data directory', async () => {
    const key = randomUUID();
    const before = await startTestApp({ DATA_DIR: t.dir }, clock);
    const first = await before.call('POST', '/factory', { name: 'Survives restarts' }, undefined, keyed(key));
    expect(first.statusCode).toBe(201);
    await before.stop();
    const after = await startTestApp({ DATA_DIR: t.dir }, clock);
    try {
      expectReplayOf(first, await after.call('POST', '/factory', { name: 'Survives restarts' }, undefined, keyed(key)));
    } finally {
      await after.stop();
    }
    expect(await factoriesNamed('Survives restarts')).toHaveLength(1);
  });

  it('holds a key whose first request died unanswered for its lease, then lets a retry take it over', async () => {
    // A process that died between its change and the record of its answer leaves a reservation
    // alone; this copies a real one (the fingerprint does not depend on the key) under a new key.
    const used = randomUUID();
    expect((await createFactory('Orphaned', used)).statusCode).toBe(201);
    const [reservation] = await recordOf(used);
    const key = randomUUID();
    const data = { ...(reservation!.data as object), attempt: randomUUID(), reserved_at: clock.now().toISOString() };
    await t.rt.events.append(
      idempotencyStream(`user:${t.adminUid}`, key),
      [{ id: randomUUID(), type: 'IdempotencyKeyReserved', data, metadata: reservation!.metadata }],
      'no_stream',
    );

    await expectRefused(t, () => createFactory('Orphaned', key), 409, 'idempotency_key_in_use');
    clock.advance(LEASE_MS - 1);
    await expectRefused(t, () => createFactory('Orphaned', key), 409, 'idempotency_key_in_use');
    await expectRefused(t, () => createFactory('Not orphaned', key), 422, 'idempotency_key_reused');
    clock.advance(1);
    const taken = await createFactory('Orphaned', key);
    expect(taken.statusCode).toBe(201);
    expectReplayOf(taken, await createFactory('Orphaned', key));
  });

  it('replays an answer that shows a credential once, which the log never holds in clear', async () => {
    const agent = (await t.call('POST', '/agent/identities', { name: 'Keyed' })).json();
    const key = randomUUID();
    const issue = () => t.call('POST', `/agent/identities/${agent.uid}/api-keys`, undefined, undefined, keyed(key));
    const first = await issue();
    expect(first.statusCode, first.body).toBe(201);
    expectReplayOf(first, await issue());
    const { api_key } = first.json();
    expect((await t.call('GET', '/agent/identities', undefined, api_key)).statusCode).not.toBe(401);
    const log = JSON.stringify(await t.rt.events.readAll({ commit: -1n, prepare: -1n }, 1_000_000), (_k, v) =>
      typeof v === 'bigint' ? String(v) : v,
    );
    expect(log).not.toContain(api_key);
    expect(log).not.toContain(api_key.slice(3));
    expect(log).not.toContain(key);
  });

  it('covers every create (runs, tasks, dispatch, teams, members, agents, webhooks, automations, schedules, secrets, replays, attachments) and follow-ups', async () => {
    const factory = (await t.call('POST', '/factory', { name: 'Covered' })).json();
    const foreman = { name: 'Covered foreman', agent_type: 'FOREMAN', factory_uid: factory.uid };
    expect((await t.call('POST', '/agent/identities', foreman)).statusCode).toBe(201);
    const webhook = (await t.call('POST', `/factory/${factory.uid}/webhooks`, { name: 'For automations' })).json();
    const run = (await t.call('POST', '/agent/runs', { prompt: 'for a task' })).json();
    const delivered = await t.app.inject({
      method: 'POST',
      url: `/webhooks/w/${webhook.uid}`,
      payload: '{"kind":"deploy"}',
      headers: { authorization: `Bearer ${webhook.secret}`, 'content-type': 'application/json' },
    });
    expect(delivered.statusCode, delivered.body).toBe(202);
    const deliveries = `/factory/${factory.uid}/webhooks/${webhook.uid}/deliveries`;
    const attachment = {
      file_name: 'note.png',
      mime_type: 'image/png',
      data: Buffer.from('not really').toString('base64'),
    };
    const trigger = { provider: 'webhook', event: 'received', filter: { webhook_ids: [webhook.uid] } };
    const creates: Array<[string, unknown]> = [
      ['/agent/runs', { prompt: 'once' }],
      ['/agent/run', { prompt: 'once, the old way' }],
      [`/factory/${factory.uid}/tasks`, { title: 'A task', conversation_id: run.conversation_id }],
      [`/factory/${factory.uid}/runs`, { prompt: 'dispatched' }],
      ['/teams', { name: 'Covered team' }],
      [`/teams/${t.teamUid}/members`, { email: `covered-${randomUUID()}@example.com` }],
      ['/agent/identities', { name: 'Covered agent' }],
      [`/factory/${factory.uid}/webhooks`, { name: 'Covered hook' }],
      [
        `/factory/${factory.uid}/automations`,
        { name: 'Covered', prompt: 'Triage. '.repeat(12_000), triggers: [trigger] },
      ],
      ['/agent/schedules', { name: 'Covered schedule', prompt: 'tick', cron_schedule: '@daily' }],
      ['/agent/environments', { name: 'Covered environment' }],
      ['/me/api-keys', { label: 'covered' }],
      [`/teams/${t.teamUid}/secrets`, { name: `COVERED_${Date.now()}`, value: 'hush-hush-hush' }],
      [`/agent/runs/${run.run_id}/followups`, { message: 'once more' }],
      [`/agent/conversations/${run.conversation_id}/followups`, { message: 'and once again' }],
      [`${deliveries}/${delivered.json().delivery_id}/replay`, undefined],
      [`/agent/runs/${run.run_id}/attachments`, attachment],
      [`/agent/conversations/${run.conversation_id}/attachments`, attachment],
    ];
    for (const [url, body] of creates) {
      const key = randomUUID();
      const first = await t.call('POST', url, body, undefined, keyed(key));
      expect(first.statusCode, `${url}: ${first.body}`).toBeLessThan(300);
      // The retry writes nothing: no event carries its request id (reactors may still be at work).
      const head = await t.rt.events.headPosition();
      const requestId = randomUUID();
      expectReplayOf(first, await t.call('POST', url, body, undefined, keyed(key, { 'x-request-id': requestId })));
      const since = await t.rt.events.readAll(head, 10_000);
      expect(
        since.filter((e) => e.metadata.request_id === requestId),
        url,
      ).toEqual([]);
    }
    const openapi = (await t.call('GET', '/openapi.json')).json();
    const headerOf = (path: string, method: string) =>
      (openapi.paths[path]?.[method]?.parameters ?? []).find(
        (p: { in: string; name: string }) => p.in === 'header' && p.name === 'idempotency-key',
      );
    expect(headerOf('/api/v1/factory', 'post')).toMatchObject({ required: false });
    expect(headerOf('/api/v1/factory/{factory_uid}/automations', 'post')).toBeDefined();
    expect(headerOf('/api/v1/agent/runs/{run_id}/cancel', 'post')).toBeUndefined();
    expect(headerOf('/api/v1/factory', 'get')).toBeUndefined();
  });

  it('refuses a malformed key with 400 and writes nothing', async () => {
    for (const key of ['with space', 'x'.repeat(256), '"unterminated', '"a"b"', 'a, b']) {
      const body = await expectRefused(t, () => createFactory('Malformed', key), 400, 'invalid_idempotency_key');
      expect(body.errors).toEqual([{ path: 'headers.idempotency-key', message: expect.any(String) }]);
    }
    // A quoted key (a Structured Fields string, as the draft writes it) is the bare key.
    const first = await createFactory('Quoted', 'q-1');
    expectReplayOf(first, await createFactory('Quoted', '"q-1"'));
    expect((await createFactory('Longest', 'k'.repeat(255))).statusCode).toBe(201);
  });
});

describe('which answers a key keeps', () => {
  const send = (answer: string, key: string, url = '/probe') => t.call('POST', url, { answer }, undefined, keyed(key));

  it('keeps successes, refusals and a saved change the read models could not show', async () => {
    for (const answer of ['created', 'empty', 'refused', 'saved_unread']) {
      const key = randomUUID();
      const before = calls;
      const first = await send(answer, key);
      expectReplayOf(first, await send(answer, key));
      expect(calls, answer).toBe(before + 1);
    }
  });

  it('releases the key on an answer that invites a retry (a 5xx, a retryable problem), so the retry runs again', async () => {
    for (const answer of ['failure', 'busy']) {
      const key = randomUUID();
      const before = calls;
      const first = await send(answer, key);
      expect(first.statusCode).toBeGreaterThanOrEqual(409);
      const retry = await send(answer, key);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(calls, answer).toBe(before + 2);
      expect((await recordOf(key)).map((e) => e.type)).toEqual([
        'IdempotencyKeyReserved',
        'IdempotencyKeyReleased',
        'IdempotencyKeyReserved',
        'IdempotencyKeyReleased',
      ]);
      // Once it succeeds, that answer is the key's.
      const done = await send('created', key);
      expect(done.statusCode).toBe(201);
      expectReplayOf(done, await send('created', key));
    }
  });

  it('ignores the header on routes that do not opt in', async () => {
    const key = randomUUID();
    const before = calls;
    await send('created', key, '/probe/plain');
    const again = await send('created', key, '/probe/plain');
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(calls).toBe(before + 2);
    expect(await recordOf(key)).toEqual([]);
  });
});
