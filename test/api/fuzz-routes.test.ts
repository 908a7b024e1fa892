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
import { startTestApp } from '../helpers/app.js';
import { prepareWorld } from '../helpers/api-world.js';
import {
  examples,
  type Operation,
  openApiDoc,
  schemaArbitraries,
  setAt,
  targets,
} from '../helpers/openapi-requests.js';

const SEED = Number(process.env.FUZZ_SEED ?? 17_2024);
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
/** "Within a few seconds": every request here answers in milliseconds. */
const ANSWER_WITHIN_MS = 5000;
const KB = 1024;

const t = await startTestApp();
afterAll(() => t.close());

const world = await prepareWorld(t);
const { existing, credentialFor, readsAfter, execution } = world;

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

const doc = await openApiDoc(t);
const { plausible } = schemaArbitraries(doc);

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
      .array(fc.tuple(fc.constantFrom(...targets(value, (v) => v instanceof Big)), hostile), {
        minLength: 1,
        maxLength: 2,
      })
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

const withTimeout = <T>(p: Promise<T>, what: string) =>
  Promise.race([
    p,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms: ${what}`)), ANSWER_WITHIN_MS).unref(),
    ),
  ]);

/** The problem document of a refused stream request; an open stream is left (the app's close ends it). */
async function problemOf(res: { statusCode: number; stream(): NodeJS.ReadableStream }): Promise<string> {
  if (res.statusCode === 200) return '';
  let text = '';
  for await (const chunk of res.stream()) text += chunk.toString();
  return text;
}

describe(`every operation survives generated requests (seed ${SEED}, ${RUNS} runs each)`, () => {
  it.each(operations.map((o) => [`${o.method} ${o.path}`, o] as const))('%s', async (_name, { path, method, op }) => {
    const streaming = op.responses?.['200']?.content?.['text/event-stream'] !== undefined;
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
            // An event stream that opens stays open by design: its answer is its status and headers.
            ...(streaming ? { payloadAsStream: true } : {}),
          }),
          what,
        );
        const body = streaming ? await problemOf(res) : res.body;
        expect(res.statusCode, `${what}: ${body.slice(0, 500)}`).toBeLessThan(500);
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
