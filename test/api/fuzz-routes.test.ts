/**
 * Property: no request breaks the server (issue #17). Every operation of the OpenAPI document,
 * webhook ingress included, gets generated requests: bodies shaped like its schema with some
 * fields swapped for something hostile (nested 65 to 100,000 deep, thousands of keys, strings of
 * 64 KB to 2 MB, lone surrogates, NUL, wrong types, nulls, numbers where strings belong), wholly
 * hostile bodies and broken JSON; path parameters naming existing things or not; hostile query
 * strings. Each must be answered, below 500, within a few seconds; after each the server is still
 * ready and answers normal requests that read what it may have written (the webhook's delivery
 * log, the held run, its timeline and conversation, a page of runs, ...), and after each
 * operation it still writes.
 *
 * Deterministic: a fixed seed (FUZZ_SEED overrides it, FUZZ_RUNS the runs per operation); a
 * failure prints the seed and the request. Budget: 25 runs for each of the 92 operations, about
 * 2,300 requests through `fastify.inject` and their reads: ~10 s on an idle 2-core machine, well
 * under a minute on a loaded one.
 * Requests are sent as the admin; the worker protocol's as the agent it takes, on a run it holds,
 * and the ingress's with each webhook's own credential, so that bodies reach the handlers.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startTestApp } from '../helpers/app.js';
import { eventually } from '../helpers/task-fixtures.js';

const SEED = Number(process.env.FUZZ_SEED ?? 17_2024);
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
/** "Within a few seconds": every request here answers in milliseconds. */
const ANSWER_WITHIN_MS = 5000;
const KB = 1024;

const t = await startTestApp();
afterAll(() => t.close());

// ---- things for path parameters to name ------------------------------------------------------

const ok = async (res: Awaited<ReturnType<typeof t.call>>, status: number) => {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
};

const factory = (await ok(await t.call('POST', '/factory', { name: 'Fuzzed' }), 201)).uid as string;
const agent = (
  await ok(
    await t.call('POST', '/agent/identities', { name: 'Foreman', agent_type: 'FOREMAN', factory_uid: factory }),
    201,
  )
).uid as string;
const agentKey = (await ok(await t.call('POST', `/agent/identities/${agent}/api-keys`), 201)).api_key as string;
const tokenHook = await ok(await t.call('POST', `/factory/${factory}/webhooks`, { name: 'token' }), 201);
const urlHook = await ok(
  await t.call('POST', `/factory/${factory}/webhooks`, { name: 'url', authMode: 'url_token' }),
  201,
);
// Accepted deliveries start runs, with and without a payload filter.
const automation = (
  await ok(
    await t.call('POST', `/factory/${factory}/automations`, {
      name: 'On any',
      prompt: 'Look',
      agent,
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [tokenHook.uid] } }],
    }),
    201,
  )
).id as string;
await ok(
  await t.call('POST', `/factory/${factory}/automations`, {
    name: 'On opened',
    prompt: 'Look',
    agent,
    triggers: [
      {
        provider: 'webhook',
        event: 'received',
        filter: { webhook_ids: [tokenHook.uid], payload: { action: ['opened'], pr: { draft: { exists: false } } } },
      },
    ],
  }),
  201,
);
const delivery = (
  await ok(
    await t.app.inject({
      method: 'POST',
      url: `/webhooks/w/${tokenHook.uid}`,
      headers: { authorization: `Bearer ${tokenHook.secret}` },
      payload: { action: 'opened' },
    }),
    202,
  )
).delivery_id as string;
await ok(await t.call('POST', `/teams/${t.teamUid}/secrets`, { name: 'fuzz_secret', value: 's3cret-value' }), 201);
const schedule = (
  await ok(await t.call('POST', '/agent/schedules', { name: 'Weekly', prompt: 'p', cron_schedule: '0 9 * * 1' }), 201)
).id as string;
const dispatched = await ok(await t.call('POST', `/factory/${factory}/runs`, { prompt: 'Dispatched' }), 201);

// A run held by a worker of the agent, claimed and started, for the reports.
const worker = (await ok(await t.call('POST', '/agent/workers', { host: 'fuzz' }, agentKey), 201)).worker_id as string;
const held = await ok(await t.call('POST', '/agent/runs', { prompt: 'Held', config: { worker_host: worker } }), 200);
let execution = '';
while (!execution) {
  const claimed = await ok(await t.call('POST', `/agent/workers/${worker}/claim`, undefined, agentKey), 200);
  if (claimed.run.run_id === held.run_id) execution = claimed.run.execution_id;
}
// Made after the claims, so that no worker holds it.
const run = await ok(await t.call('POST', '/agent/runs', { prompt: 'Someone else runs this' }), 200);
const report = (what: string, body?: unknown) =>
  t.call('POST', `/agent/workers/${worker}/runs/${held.run_id}/${what}`, body, agentKey, {
    'x-execution-id': execution,
  });
await ok(await report('claim'), 200);
await ok(await report('start'), 200);
const artifact = (await ok(await report('artifacts', { artifact_type: 'PLAN', content: 'Plan' }), 201))
  .artifact_uid as string;
// The reactor makes the dispatched run's task.
const task = await eventually(async () => {
  const res = await t.call('GET', `/factory/${factory}/task-by-run?run_id=${dispatched.run_id}`);
  return res.statusCode === 200 ? (res.json().uid as string) : undefined;
});

/** The existing thing a path parameter names; worker routes name the held run. */
const existing = (path: string, param: string): string | undefined =>
  ({
    team_uid: t.teamUid,
    factory_uid: factory,
    agent_uid: agent,
    webhook_uid: path.startsWith('/webhooks/w/{webhook_uid}/') ? urlHook.uid : tokenHook.uid,
    token: urlHook.secret,
    automation_id: automation,
    delivery_id: delivery,
    schedule_id: schedule,
    secret_name: 'fuzz_secret',
    run_id: path.startsWith('/api/v1/agent/workers/') ? held.run_id : run.run_id,
    conversation_id: run.conversation_id,
    task_uid: task,
    worker_id: worker,
    artifact_uid: artifact,
  })[param];

// ---- hostile values --------------------------------------------------------------------------

/** Printed short in a counterexample, written out in full when the body is encoded. */
abstract class Big {
  abstract materialize(): unknown;
  abstract [fc.toStringMethod](): string;
}
/** Arrays or objects nested `levels` deep: written as text, since JSON.stringify overflows past ~5,000. */
class Deep extends Big {
  constructor(
    readonly levels: number,
    readonly kind: 'array' | 'object',
  ) {
    super();
  }
  text() {
    return this.kind === 'array'
      ? '['.repeat(this.levels) + ']'.repeat(this.levels)
      : `${'{"a":'.repeat(this.levels)}1${'}'.repeat(this.levels)}`;
  }
  materialize(): unknown {
    throw new Error('written as text');
  }
  [fc.toStringMethod]() {
    return `Deep(${this.levels} ${this.kind}s)`;
  }
}
/** A string of about `bytes` bytes of UTF-8, of one character over and over. */
class Huge extends Big {
  constructor(
    readonly bytes: number,
    readonly unit: string,
  ) {
    super();
  }
  materialize() {
    return this.unit.repeat(Math.ceil(this.bytes / Buffer.byteLength(this.unit)));
  }
  [fc.toStringMethod]() {
    return `Huge(${this.bytes} bytes of ${JSON.stringify(this.unit)})`;
  }
}
/** A list of `count` elements, or an object of `count` keys. */
class Wide extends Big {
  constructor(
    readonly count: number,
    readonly kind: 'array' | 'object',
  ) {
    super();
  }
  materialize() {
    return this.kind === 'array'
      ? new Array(this.count).fill(0)
      : Object.fromEntries(Array.from({ length: this.count }, (_, i) => [`k${i}`, i]));
  }
  [fc.toStringMethod]() {
    return `Wide(${this.count} ${this.kind === 'array' ? 'elements' : 'keys'})`;
  }
}

/** Characters that are easy to get wrong: NUL, controls, quotes, lone surrogates, astral, bidi. */
const edgeUnit = fc.oneof(
  fc.constantFrom('\0', '\u001b', '\n', '"', '\\', '/', '\ud800', '\udfff', '\uffff', '\u{1F600}', '\u202e', 'é', '%'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
const edgeString = fc.oneof(
  fc.string({ unit: edgeUnit, maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '../../etc/passwd',
    '__proto__',
    'constructor',
    '<script>',
    'null',
    '0',
    '-1',
    'x'.repeat(129),
  ),
);
/** Depth first: past 1,000 levels SQLite's JSON refuses a document, past ~5,000 JSON.stringify throws. */
const hostile: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(65, 1001, 10_000, 100_000)
      .chain((n) => fc.constantFrom(new Deep(n, 'array'), new Deep(n, 'object'))),
  },
  fc
    .constantFrom(64 * KB + 1, 300 * KB, 1100 * KB, 2100 * KB)
    .chain((n) => fc.constantFrom(new Huge(n, 'x'), new Huge(n, 'é'), new Huge(n, '\0'), new Huge(n, '\ud800'))),
  fc.constantFrom(
    new Wide(5000, 'array'),
    new Wide(100_000, 'array'),
    new Wide(1000, 'object'),
    new Wide(20_000, 'object'),
  ),
  { weight: 2, arbitrary: edgeString },
  fc.constantFrom(null, true, false, 0, -0, -1, 0.5, 1e308, -1e308, 2 ** 53 + 1, [], {}, [null], { '': null }),
  fc.jsonValue({ maxDepth: 3, stringUnit: edgeUnit }),
);

// ---- bodies shaped like the schema -----------------------------------------------------------

type Schema = {
  $ref?: string;
  type?: string;
  format?: string;
  pattern?: string;
  enum?: unknown[];
  const?: unknown;
  nullable?: boolean;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};
type Parameter = { in: 'path' | 'query' | 'header'; name: string; required?: boolean; schema: Schema };
type Operation = { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> } };

const doc = (await t.call('GET', '/openapi.json')).json() as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};
const resolve = (s: Schema): Schema => (s.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()!]!) : s);

const aString = (s: Schema): fc.Arbitrary<string> => {
  if (s.format === 'date-time') return fc.constant('2024-05-17T09:00:00Z');
  if (s.format === 'uri') return fc.constant('https://example.com/acme/api/pull/1');
  if (s.format === 'email') return fc.constantFrom('a@example.com', 'b@example.org');
  if (s.pattern && s.pattern.length < 200)
    try {
      return fc.stringMatching(new RegExp(s.pattern), { size: 'xsmall' });
    } catch {
      // A pattern fast-check cannot generate from: any short string.
    }
  return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 20, 20) });
};

/** A value that mostly passes `schema` (small, of its type, its enums and patterns). */
function plausible(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  const options = s.anyOf ?? s.oneOf ?? s.allOf;
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.const !== undefined) return fc.constant(s.const);
  if (options) return fc.oneof(...options.map((o) => plausible(o, depth)));
  if (depth > 4) return fc.constant(null);
  switch (s.type) {
    case 'string':
      return aString(s);
    case 'integer':
      return fc.integer({ min: Math.max(s.minimum ?? 0, -1e6), max: Math.min(s.maximum ?? 100, 1e6) });
    case 'number':
      return fc.double({ min: s.minimum ?? 0, max: Math.min(s.maximum ?? 100, 1e6), noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(plausible(s.items ?? {}, depth + 1), { maxLength: Math.min(s.maxItems ?? 3, 3) });
    case 'object': {
      const props = s.properties ?? {};
      if (!Object.keys(props).length) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }));
      // The required fields and a few others: with every optional field, some one of them nearly always fails.
      const required = (s.required ?? []).filter((k) => k in props);
      const optional = Object.keys(props).filter((k) => !required.includes(k));
      return fc
        .subarray(optional, { maxLength: Math.min(2, optional.length) })
        .chain((chosen) =>
          fc.record(Object.fromEntries([...required, ...chosen].map((k) => [k, plausible(props[k]!, depth + 1)]))),
        );
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

type Path = Array<string | number>;

/** Where in `value` something hostile may go: any of its nodes, or a new key or item beside them. */
function targets(value: unknown): Path[] {
  const found: Path[] = [[]];
  const walk = (v: unknown, at: Path) => {
    if (found.length > 200 || !v || typeof v !== 'object' || v instanceof Big) return;
    const entries: Array<[string | number, unknown]> = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    found.push([...at, Array.isArray(v) ? v.length : 'x']);
    for (const [k, x] of entries) {
      found.push([...at, k]);
      walk(x, [...at, k]);
    }
  };
  walk(value, []);
  return found;
}

/** `value` with `replacement` at `path`, making the objects and lists on the way. */
function setAt(value: unknown, path: Path, replacement: unknown): unknown {
  if (!path.length) return replacement;
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const list = Array.isArray(value) ? [...value] : [];
    list[head] = setAt(list[head], rest, replacement);
    return list;
  }
  const object = value && typeof value === 'object' && !Array.isArray(value) ? { ...value } : {};
  (object as Record<string, unknown>)[head!] = setAt((object as Record<string, unknown>)[head!], rest, replacement);
  return object;
}

/** A valid request of each operation that writes, so that a swapped field is the request's only fault. */
const examples: Record<string, unknown> = {
  'POST /api/v1/teams': { name: 'Team' },
  'POST /api/v1/teams/{team_uid}/members': { email: 'member@example.com', display_name: 'M', role: 'member' },
  'POST /api/v1/agent/identities': { name: 'A', memory: { notes: 'n' }, mcp_servers: { s: { url: 'https://m' } } },
  'PUT /api/v1/agent/identities/{agent_uid}': { description: 'd', harness: { type: 'claude' } },
  'POST /api/v1/teams/{team_uid}/secrets': { name: 'other_secret', value: 'v' },
  'POST /api/v1/factory': { name: 'F', repositories: [{ owner: 'acme', repo: 'api' }] },
  'PATCH /api/v1/factory/{factory_uid}': { description: 'd' },
  'POST /api/v1/agent/runs': { prompt: 'p', config: { name: 'n', extra: { a: [1] } }, metadata: { k: 'v' } },
  'POST /api/v1/agent/run': { prompt: 'p', config: { name: 'n' } },
  'POST /api/v1/agent/runs/{run_id}/followups': { message: 'm' },
  'POST /api/v1/agent/conversations/{conversation_id}/followups': { message: 'm' },
  'POST /api/v1/factory/{factory_uid}/tasks': { title: 't', conversation_id: 'c' },
  'PATCH /api/v1/factory/{factory_uid}/tasks/{task_uid}': { title: 't' },
  'POST /api/v1/factory/{factory_uid}/runs': { prompt: 'p', ticket_ref: 'linear:PAY-1' },
  'POST /api/v1/factory/{factory_uid}/webhooks': { name: 'W' },
  'PATCH /api/v1/factory/{factory_uid}/webhooks/{webhook_uid}': { name: 'W2' },
  'POST /api/v1/factory/{factory_uid}/automations': {
    name: 'A',
    prompt: 'p',
    triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: ['w'], payload: { a: ['b'] } } }],
  },
  'PATCH /api/v1/factory/{factory_uid}/automations/{automation_id}': { name: 'A2' },
  'POST /api/v1/agent/schedules': { name: 'S', prompt: 'p', cron_schedule: '0 9 * * 1', agent_config: { x: 1 } },
  'PUT /api/v1/agent/schedules/{schedule_id}': { name: 'S', prompt: 'p', cron_schedule: '0 9 * * 1' },
  'POST /api/v1/agent/workers': { host: 'h', capabilities: ['c'] },
  'POST /api/v1/agent/workers/{worker_id}/heartbeat': { runs: [], acks: [] },
  'POST /api/v1/agent/workers/{worker_id}/runs/{run_id}/timeline': { name: 'n', detail: { a: { b: [1] } } },
  'POST /api/v1/agent/workers/{worker_id}/runs/{run_id}/messages': {
    role: 'assistant',
    content: [
      { type: 'action', id: 'a', category: 'command', name: 'n', input: { cmd: 'ls' } },
      { type: 'action_result', action_id: 'a', category: 'command', name: 'n', state: 'completed', output: { ok: 1 } },
      { type: 'event', name: 'e', data: { d: 1 } },
    ],
  },
  'POST /api/v1/agent/workers/{worker_id}/runs/{run_id}/artifacts': {
    artifact_type: 'EXTERNAL_REFERENCE',
    reference_type: 'doc',
    url: 'https://x.dev',
    metadata: { k: 'v' },
  },
  'POST /api/v1/agent/workers/{worker_id}/runs/{run_id}/usage': {
    model_token_usage: [{ model_id: 'm', total_tokens: 1, tokens_by_category: { a: 1 } }],
  },
  'POST /api/v1/agent/workers/{worker_id}/runs/{run_id}/finish': { state: 'SUCCEEDED' },
  'POST /webhooks/w/{webhook_uid}': { action: 'opened', pr: { draft: false, labels: ['x'] } },
  'POST /webhooks/w/{webhook_uid}/{token}': { action: 'opened' },
};

/** Broken JSON and bodies that are not JSON at all. */
const brokenText = fc.constantFrom(
  '',
  '{',
  '{"a":1}{"b":2}',
  'NaN',
  '\uFEFF{}',
  '[1,]',
  "{'a':1}",
  '['.repeat(200_000),
  '\0',
);

type Body = { kind: 'value'; value: unknown } | { kind: 'text'; text: string } | { kind: 'none' };

const bodyFor = (name: string, op: Operation): fc.Arbitrary<Body> => {
  const schema = op.requestBody?.content['application/json']?.schema;
  const generated = schema ? plausible(schema) : fc.constant({});
  const shaped =
    name in examples ? fc.oneof({ weight: 3, arbitrary: fc.constant(examples[name]) }, generated) : generated;
  // One or two of its nodes swapped for something hostile.
  const spoiled = shaped.chain((value) =>
    fc
      .array(fc.tuple(fc.constantFrom(...targets(value)), hostile), { minLength: 1, maxLength: 2 })
      .map((swaps) => swaps.reduce((v, [path, bad]) => setAt(v, path, bad), value)),
  );
  return fc.oneof(
    { weight: 2, arbitrary: shaped.map((value): Body => ({ kind: 'value', value })) },
    { weight: 5, arbitrary: spoiled.map((value): Body => ({ kind: 'value', value })) },
    { weight: 2, arbitrary: hostile.map((value): Body => ({ kind: 'value', value })) },
    { weight: 1, arbitrary: brokenText.map((text): Body => ({ kind: 'text', text })) },
    { weight: 1, arbitrary: fc.constant<Body>({ kind: 'none' }) },
  );
};

/** The JSON text of a body; hostile values written out, deep ones as text. */
function encode(body: Body): string | undefined {
  if (body.kind === 'none') return undefined;
  if (body.kind === 'text') return body.text;
  const deep: Deep[] = [];
  const text = JSON.stringify(body.value, (_key, v) => {
    if (v instanceof Deep) return `\u0000deep${deep.push(v) - 1}\u0000`;
    return v instanceof Big ? v.materialize() : v;
  });
  return (text ?? 'null').replace(/"\\u0000deep(\d+)\\u0000"/g, (_, i) => deep[Number(i)]!.text());
}

// ---- URLs ------------------------------------------------------------------------------------

/** Percent-encodes every byte of the UTF-8 (lone surrogates become U+FFFD), or passes a raw broken escape. */
const urlPart = fc.oneof(
  {
    weight: 6,
    arbitrary: edgeString.map((s) =>
      [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%ED%A0%80', '%00', '%C0%AF', 'x'.repeat(2000)) },
);

const pathFor = (path: string, op: Operation): fc.Arbitrary<string> => {
  const params = (op.parameters ?? []).filter((p) => p.in === 'path');
  return fc
    .tuple(
      ...params.map((p) => {
        const known = existing(path, p.name);
        return known === undefined
          ? urlPart
          : fc.oneof({ weight: 4, arbitrary: fc.constant(known) }, { weight: 1, arbitrary: urlPart });
      }),
    )
    .map((values) => params.reduce((url, p, i) => url.replace(`{${p.name}}`, values[i]!), path));
};

const queryFor = (op: Operation): fc.Arbitrary<string> => {
  const names = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  const value = fc.oneof(
    urlPart,
    fc.constantFrom('1', '0', '-1', 'true', 'false', '2024-05-17T09:00:00Z', 'QUEUED', 'desc', '99999999999999999999'),
  );
  const name = fc.oneof(
    { weight: 4, arbitrary: names.length ? fc.constantFrom(...names) : fc.constant('surprise') },
    { weight: 1, arbitrary: fc.constantFrom('surprise', 'metadata[k]', 'metadata[]') },
  );
  const pairs = fc.array(fc.tuple(name, value), { maxLength: names.length ? 4 : 1 });
  // A route without parameters refuses any: mostly none, so that the body is what is tried.
  return (names.length ? pairs : fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, pairs)).map((pairs) =>
    // A valid long poll waits for a run by design (up to 30 s): hostile waits only.
    pairs
      .filter(([n, v]) => !(n === 'wait_seconds' && /^\d+$/.test(v) && Number(v) > 0))
      .map(([n, v]) => `${n}=${v}`)
      .join('&'),
  );
};

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('text/plain', 'application/octet-stream', 'application/json; charset=utf-16'),
  },
);

// ---- the property ----------------------------------------------------------------------------

/**
 * Ingress first (management routes may rotate or delete its webhooks), deletions last and the
 * deepest first (deleting the factory first would leave its webhooks and tasks nothing to try).
 */
const operations = Object.entries(doc.paths)
  .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })))
  .sort((a, b) => rank(a) - rank(b));
function rank(o: { path: string; method: string }) {
  if (o.path.startsWith('/webhooks/')) return 0;
  return o.method === 'DELETE' ? 100 - o.path.split('/').length : 1;
}

function credentialFor(path: string): Record<string, string> {
  if (path === '/webhooks/w/{webhook_uid}') return { authorization: `Bearer ${tokenHook.secret}` };
  if (path.startsWith('/webhooks/')) return {};
  return { authorization: `Bearer ${path.startsWith('/api/v1/agent/workers') ? agentKey : ADMIN_KEY}` };
}

/** Normal requests that read what the operation may have written: each answers 200 right after it. */
function readsAfter(path: string): string[] {
  if (path.startsWith('/webhooks/')) {
    const hook = path === '/webhooks/w/{webhook_uid}' ? tokenHook.uid : urlHook.uid;
    return [`/api/v1/factory/${factory}/webhooks/${hook}/deliveries`];
  }
  if (path.startsWith('/api/v1/agent/workers')) {
    const at = `/api/v1/agent/runs/${held.run_id}`;
    return [at, `${at}/timeline`, `${at}/conversation`];
  }
  if (path.startsWith('/api/v1/agent/identities')) return ['/api/v1/agent/identities'];
  if (path.startsWith('/api/v1/agent/schedules')) return ['/api/v1/agent/schedules'];
  if (path.startsWith('/api/v1/agent/')) return ['/api/v1/agent/runs?limit=100'];
  if (path.startsWith('/api/v1/factory')) return ['/api/v1/factory'];
  return ['/api/v1/teams'];
}

const withTimeout = <T>(p: Promise<T>, what: string) =>
  Promise.race([
    p,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms: ${what}`)), ANSWER_WITHIN_MS).unref(),
    ),
  ]);

describe(`every operation survives generated requests (seed ${SEED}, ${RUNS} runs each)`, () => {
  it.each(operations.map((o) => [`${o.method} ${o.path}`, o] as const))('%s', async (_name, { path, method, op }) => {
    const request = fc.record({
      path: pathFor(path, op),
      query: queryFor(op),
      body: bodyFor(`${method} ${path}`, op),
      contentType,
      execution: fc.oneof(
        { weight: 4, arbitrary: fc.constant(execution) },
        { weight: 1, arbitrary: fc.string({ maxLength: 300 }) },
      ),
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const payload = encode(r.body);
        const url = r.query ? `${r.path}?${r.query}` : r.path;
        const what = `${method} ${url.slice(0, 200)}`;
        const res = await withTimeout(
          t.app.inject({
            method: method as 'GET',
            url,
            headers: {
              ...credentialFor(path),
              ...(payload !== undefined ? { 'content-type': r.contentType } : {}),
              'x-execution-id': r.execution,
            },
            ...(payload !== undefined ? { payload } : {}),
          }),
          what,
        );
        expect(res.statusCode, `${what}: ${res.body.slice(0, 500)}`).toBeLessThan(500);
        const ready = await withTimeout(t.app.inject({ method: 'GET', url: '/readyz' }), 'GET /readyz');
        expect(ready.statusCode, `after ${what}: ${ready.body}`).toBe(200);
        expect(ready.json().set_aside, `after ${what}: events set aside`).toEqual([]);
        for (const url of readsAfter(path)) {
          const read = await withTimeout(t.app.inject({ method: 'GET', url, headers: credentialFor(url) }), url);
          expect(read.statusCode, `GET ${url} after ${what}: ${read.body.slice(0, 300)}`).toBe(200);
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    // And it still writes, and reads its writes.
    const created = await t.call('POST', '/factory', { name: `After ${method} ${path}`.slice(0, 200) });
    expect(created.statusCode, created.body).toBe(201);
    expect((await t.call('GET', `/factory/${created.json().uid}`)).statusCode).toBe(200);
  });
});
