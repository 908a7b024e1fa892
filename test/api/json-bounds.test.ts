/**
 * Free-form JSON is bounded at the edge (issue #17): a run config nested 1,001 deep was appended
 * and broke the read store, and a 20 MB one was accepted. Every such field now has a size and a
 * depth, a breach is a 400 naming the field and writes nothing, and every string and list of
 * every request has a bound the OpenAPI document shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_CONFIG_MAX_BYTES } from '../../commands/run/schema.js';
import { REPORT_BOUNDS } from '../../commands/worker/schema.js';
import { expectRefused, startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let agentKey: string;
beforeAll(async () => {
  t = await startTestApp();
  const agent = await t.call('POST', '/agent/identities', { name: 'Runner' });
  agentKey = (await t.call('POST', `/agent/identities/${agent.json().uid}/api-keys`)).json().api_key;
});
afterAll(() => t.close());

/** An array nested `levels` deep: `[[[…]]]`. */
const nested = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels));
const MB = 1024 * 1024;

/** Refused with 400 invalid_request, nothing written, the error on `path` saying `message`. */
async function refusedAt(request: () => ReturnType<TestApp['call']>, path: string, message: string | RegExp) {
  const problem = await expectRefused(t, request, 400, 'invalid_request');
  expect(problem.errors).toContainEqual({ path, message: expect.stringMatching(message) });
  expect((await t.app.inject({ method: 'GET', url: '/readyz' })).json().set_aside).toEqual([]);
}

/** Refused (400 by its field's bound, or 413 by the route's body limit, whichever comes first), nothing written. */
async function refusedAnyway(request: () => ReturnType<TestApp['call']>) {
  const before = await t.head();
  expect([400, 413]).toContain((await request()).statusCode);
  expect(await t.head()).toBe(before);
}

const createRun = (body: unknown) => t.call('POST', '/agent/runs', body);
const TOO_DEEP = /^nests at most 64 levels deep$/;

describe('a run config', () => {
  it('nested 1,001 deep is refused with 400 naming body.config, and nothing is written', async () => {
    await refusedAt(() => createRun({ prompt: 'x', config: { x: nested(1001) } }), 'body.config', TOO_DEEP);
  });

  it('of 2 MB is refused, and nothing is written', async () => {
    const config = { notes: 'x'.repeat(2 * MB) };
    await refusedAt(() => createRun({ prompt: 'x', config }), 'body.config', 'at most 64 KB of JSON');
  });

  it('is taken at its edges: 64 levels, 64 KB besides a base_prompt of 100,000 characters', async () => {
    const pad = (bytes: number) => 'x'.repeat(bytes - JSON.stringify({ notes: '' }).length);
    const config = { x: nested(63), base_prompt: 'é'.repeat(100_000) };
    const res = await createRun({ prompt: 'x', config });
    expect(res.statusCode, res.body).toBe(200);
    const run = (await t.call('GET', `/agent/runs/${res.json().run_id}`)).json();
    expect(run.agent_config.x).toEqual(nested(63));
    expect((await createRun({ prompt: 'x', config: { notes: pad(RUN_CONFIG_MAX_BYTES) } })).statusCode).toBe(200);
    await refusedAt(() => createRun({ prompt: 'x', config: { x: nested(64) } }), 'body.config', TOO_DEEP);
    await refusedAt(
      () => createRun({ prompt: 'x', config: { notes: pad(RUN_CONFIG_MAX_BYTES + 1) } }),
      'body.config',
      'at most 64 KB of JSON',
    );
  });

  it('and metadata with 100,000 keys are refused before their fields are checked one by one', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, 'v']));
    await refusedAt(() => createRun({ prompt: 'x', metadata }), 'body.metadata', 'at most 32 KB of JSON');
  });

  it('with a key holding NUL is refused: MongoDB cannot store such a key (issue #30)', async () => {
    await refusedAt(() => createRun({ prompt: 'x', config: { 'k\u0000': 1 } }), 'body.config', /NUL/);
    await refusedAt(() => createRun({ prompt: 'x', config: { a: [{ '\u0000': 1 }] } }), 'body.config', /NUL/);
    const res = await createRun({ prompt: 'x', config: { k: 'a NUL in a value is fine: \u0000' } });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('of a schedule is bounded alike', async () => {
    const schedule = (agent_config: unknown) =>
      t.call('POST', '/agent/schedules', { name: 'n', prompt: 'p', cron_schedule: '0 9 * * 1', agent_config });
    await refusedAt(() => schedule({ x: nested(1001) }), 'body.agent_config', TOO_DEEP);
    await refusedAt(() => schedule({ x: 'x'.repeat(100 * 1024) }), 'body.agent_config', 'at most 64 KB of JSON');
    await refusedAnyway(() => schedule({ x: 'x'.repeat(2 * MB) }));
  });
});

/** A run claimed and started by a fresh worker, and a report on it. */
async function runningRun() {
  const workerId = (await t.call('POST', '/agent/workers', { host: 'h' }, agentKey)).json().worker_id;
  const runId = (await createRun({ prompt: 'Do it' })).json().run_id;
  let execution = '';
  // Earlier tests leave queued runs: this worker takes them until it meets its own.
  while (!execution) {
    const { run } = (await t.call('POST', `/agent/workers/${workerId}/claim`, undefined, agentKey)).json();
    if (run.run_id === runId) execution = run.execution_id;
  }
  const report = (what: string, body?: unknown) =>
    t.call('POST', `/agent/workers/${workerId}/runs/${runId}/${what}`, body, agentKey, {
      'x-execution-id': execution,
    });
  expect((await report('claim')).statusCode).toBe(200);
  expect((await report('start')).statusCode).toBe(200);
  return report;
}

describe('what a worker reports', () => {
  it('a timeline detail too deep or too large is refused, and nothing is written', async () => {
    const report = await runningRun();
    await refusedAt(() => report('timeline', { name: 'n', detail: { x: nested(1001) } }), 'body.detail', TOO_DEEP);
    await refusedAt(
      () => report('timeline', { name: 'n', detail: { x: 'x'.repeat(100 * 1024) } }),
      'body.detail',
      'at most 64 KB of JSON',
    );
    await refusedAnyway(() => report('timeline', { name: 'n', detail: { x: 'x'.repeat(2 * MB) } }));
    const edge = { x: 'x'.repeat(REPORT_BOUNDS.timelineDetail - JSON.stringify({ x: '' }).length) };
    expect((await report('timeline', { name: 'n', detail: edge })).statusCode).toBe(201);
  });

  it("a message block's input, output or data too deep or too large is refused by its path", async () => {
    const report = await runningRun();
    const action = (input: unknown) => ({ type: 'action', id: 'a', category: 'command', name: 'n', input });
    const message = (...content: unknown[]) => ({ role: 'assistant', content });
    await refusedAt(() => report('messages', message(action(nested(1001)))), 'body.content.0.input', TOO_DEEP);
    const result = (output: unknown) => ({
      type: 'action_result',
      action_id: 'a',
      category: 'command',
      name: 'n',
      state: 'completed',
      output,
    });
    await refusedAt(
      () => report('messages', message(result('x'.repeat(100 * 1024)))),
      'body.content.0.output',
      'at most 64 KB of JSON',
    );
    await refusedAt(
      () => report('messages', message({ type: 'event', name: 'e', data: { x: nested(100) } })),
      'body.content.0.data',
      TOO_DEEP,
    );
    // Each block within its own bound, but together more than a message holds.
    const blocks = Array.from({ length: 10 }, () => result('x'.repeat(60 * 1024)));
    await refusedAt(() => report('messages', message(...blocks)), 'body.content', 'at most 512 KB of JSON');
    const ok = await report('messages', message(action(nested(64)), result({ ok: true })));
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('usage and external reference metadata are bounded as a whole', async () => {
    const report = await runningRun();
    const tokens_by_category = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`c${i}`, 1]));
    await refusedAt(
      () => report('usage', { model_token_usage: [{ model_id: 'm', total_tokens: 1, tokens_by_category }] }),
      'body',
      'at most 64 KB of JSON',
    );
    const metadata = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, 'v'.repeat(100)]));
    await refusedAt(
      () =>
        report('artifacts', {
          artifact_type: 'EXTERNAL_REFERENCE',
          reference_type: 'doc',
          url: 'https://x.dev',
          metadata,
        }),
      'body.metadata',
      'at most 32 KB of JSON',
    );
  });
});

describe('other free-form fields', () => {
  it("an agent's JSON fields are bounded, also where an update clears them with an empty string", async () => {
    await refusedAt(
      () => t.call('POST', '/agent/identities', { name: 'a', mcp_servers: { s: { x: nested(1001) } } }),
      'body.mcp_servers',
      TOO_DEEP,
    );
    const uid = (await t.call('POST', '/agent/identities', { name: 'b', memory: { k: 1 } })).json().uid;
    await refusedAt(
      () => t.call('PUT', `/agent/identities/${uid}`, { memory: { x: 'x'.repeat(100 * 1024) } }),
      'body.memory',
      'at most 64 KB of JSON',
    );
    const cleared = await t.call('PUT', `/agent/identities/${uid}`, { memory: '' });
    expect(cleared.json().memory).toBeNull();
  });

  it("an automation trigger's filter is bounded before its rules are read (a deep one was a 500)", async () => {
    const factory = (await t.call('POST', '/factory', { name: 'F' })).json().uid;
    const webhook = (await t.call('POST', `/factory/${factory}/webhooks`, { name: 'W' })).json().uid;
    const automation = (payload: unknown) => ({
      name: 'a',
      prompt: 'p',
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [webhook], payload } }],
    });
    const post = (body: unknown) => t.call('POST', `/factory/${factory}/automations`, body);
    // Too deep for JSON.stringify (the test's, or the filter check's before this bound).
    const deep = JSON.stringify(automation({ a: 'DEEP' })).replace('"DEEP"', '['.repeat(10_000) + ']'.repeat(10_000));
    await refusedAt(() => post(deep), 'body.triggers.0.filter', TOO_DEEP);
    await refusedAt(
      () => post(automation({ a: ['x'.repeat(100 * 1024)] })),
      'body.triggers.0.filter',
      'at most 64 KB of JSON',
    );
  });
});

describe('numbers JSON.parse cannot hold (issue #30)', () => {
  /** `body` as JSON text with the string "HUGE" written as the number `huge`: JSON.stringify has no way to. */
  const withNumber = (body: unknown, huge: string) => JSON.stringify(body).replace('"HUGE"', huge);
  const HUGE = ['1e999', '-1e999', `4${'0'.repeat(399)}`];
  const NOT_FINITE = /^holds a number too large to keep at .+: numbers are finite, at most ±1\.8e308$/;

  it('in a free-form field are a 400 naming the field and where in it, and nothing is written', async () => {
    for (const huge of HUGE) {
      await refusedAt(
        () => createRun(withNumber({ prompt: 'x', config: { a: [1, 'HUGE'] } }, huge)),
        'body.config',
        /at a\.1:/,
      );
      const schedule = withNumber(
        { name: 'n', prompt: 'p', cron_schedule: '0 9 * * 1', agent_config: { x: { y: 'HUGE' } } },
        huge,
      );
      await refusedAt(() => t.call('POST', '/agent/schedules', schedule), 'body.agent_config', NOT_FINITE);
      const agent = withNumber({ name: 'a', memory: { limit: 'HUGE' } }, huge);
      await refusedAt(() => t.call('POST', '/agent/identities', agent), 'body.memory', NOT_FINITE);
    }
  });

  it('in what a worker reports, the whole body free-form included, are refused alike', async () => {
    const report = await runningRun();
    const timeline = withNumber({ name: 'n', detail: { took: 'HUGE' } }, '1e999');
    await refusedAt(() => report('timeline', timeline), 'body.detail', NOT_FINITE);
    const event = withNumber(
      { role: 'assistant', content: [{ type: 'event', name: 'e', data: { n: 'HUGE' } }] },
      '-1e999',
    );
    // The message's blocks together are bounded first: that bound names where.
    await refusedAt(() => report('messages', event), 'body.content', /at 0\.data\.n:/);
    const usage = withNumber({ model_token_usage: [{ model_id: 'm', total_tokens: 1, extra: 'HUGE' }] }, '1e999');
    await refusedAt(() => report('usage', usage), 'body', /at model_token_usage\.0\.extra:/);
  });

  it('in a webhook body (free-form whole) are invalid JSON, logged as such', async () => {
    const factory = (await t.call('POST', '/factory', { name: 'Numbers' })).json().uid;
    const hook = (await t.call('POST', `/factory/${factory}/webhooks`, { name: 'W' })).json();
    const deliver = (payload: string) =>
      t.app.inject({
        method: 'POST',
        url: `/webhooks/w/${hook.uid}`,
        headers: { authorization: `Bearer ${hook.secret}`, 'content-type': 'application/json' },
        payload,
      });
    for (const huge of HUGE) {
      const res = await deliver(withNumber({ action: 'opened', count: 'HUGE' }, huge));
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({
        code: 'invalid_json',
        errors: [{ path: 'body', message: expect.stringMatching(NOT_FINITE) }],
      });
    }
    const log = (await t.call('GET', `/factory/${factory}/webhooks/${hook.uid}/deliveries`)).json().deliveries;
    expect(log.map((d: { status: string }) => d.status)).toEqual(HUGE.map(() => 'rejected_invalid_json'));
  });

  it('past 2^53 but finite are kept as JSON numbers are: the nearest double', async () => {
    // 2^60 + 1 is no double: it reads back as 2^60, as from any JSON parser that reads doubles.
    const res = await createRun(
      withNumber({ prompt: 'x', config: { big: 'HUGE', tiny: 1e-300 } }, '1152921504606846977'),
    );
    expect(res.statusCode, res.body).toBe(200);
    const run = (await t.call('GET', `/agent/runs/${res.json().run_id}`)).json();
    expect(run.agent_config).toMatchObject({ big: 2 ** 60, tiny: 1e-300 });
  });
});

type Schema = {
  $ref?: string;
  type?: string;
  maxLength?: number;
  maxItems?: number;
  enum?: unknown[];
  const?: unknown;
  items?: Schema;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  'x-max-bytes'?: number;
};
type Operation = {
  parameters?: Array<{ in: string; name: string; schema: Schema }>;
  requestBody?: { content: Record<string, { schema: Schema }> };
};

describe('the OpenAPI document', () => {
  it('bounds every string, list and free-form value of every request', async () => {
    const doc = (await t.call('GET', '/openapi.json')).json() as {
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, Schema> };
    };
    const unbounded: string[] = [];
    /** `within`: under a schema with x-max-bytes, which bounds everything inside it. */
    const walk = (s: Schema | boolean | undefined, at: string, within: boolean): void => {
      if (!s || typeof s !== 'object') return;
      if (s.$ref) {
        walk(doc.components.schemas[s.$ref.split('/').pop()!], at, within);
        return;
      }
      const bounded = within || s['x-max-bytes'] !== undefined;
      for (const [i, part] of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])].entries())
        walk(part, `${at}|${i}`, bounded);
      if (bounded) return;
      const fixed = s.enum !== undefined || s.const !== undefined;
      if (s.type === 'string' && s.maxLength === undefined && !fixed)
        unbounded.push(`${at}: a string without maxLength`);
      if (s.type === 'array' && s.maxItems === undefined) unbounded.push(`${at}: a list without maxItems`);
      if (s.type === 'object' && s.additionalProperties !== undefined && s.additionalProperties !== false)
        unbounded.push(`${at}: an open object without x-max-bytes`);
      if (!s.type && !s.anyOf && !s.oneOf && !s.allOf && !fixed) unbounded.push(`${at}: any JSON without x-max-bytes`);
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${at}.${k}`, false);
      walk(s.items, `${at}[]`, false);
    };
    for (const [path, operations] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        for (const p of op.parameters ?? []) walk(p.schema, `${where} ${p.in}.${p.name}`, false);
        for (const [type, c] of Object.entries(op.requestBody?.content ?? {}))
          walk(c.schema, `${where} ${type}`, false);
      }
    expect(unbounded).toEqual([]);
  });
});
