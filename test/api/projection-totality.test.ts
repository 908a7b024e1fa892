/**
 * Property: what a decider accepts, every projection and reactor applies (issue #30). Requests
 * shaped like each writing operation of the OpenAPI document, with some of their values swapped
 * for hostile ones of the same kind (edge strings, far dates, odd recurrences, free-form JSON with
 * keys such as `$where`, `a.b`, `__proto__` or a NUL, nested to the bound), are sent through the
 * real app; for every request the server accepts, the projector and every reactor must pass its
 * events (a reactor that throws never does) with nothing set aside. Afterwards every document of
 * every read model must be one MongoDB can store too (the production read store's code path: BSON
 * keys without NUL, top-level names without `$`, at most 100 levels, at most 16 MiB), the
 * documents must show what the deciders recorded, and the events seen must cover every event type
 * a projection or reactor reads, but for the few named below with the reason.
 *
 * Deterministic: a fixed seed (TOTALITY_SEED overrides it, TOTALITY_RUNS the runs per operation);
 * the clock is the test's, moved forward at the end so that schedules fire and deliveries go out.
 */
import { setTimeout as delay } from 'node:timers/promises';
import fc from 'fast-check';
import { BSON } from 'mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import { scheduleStream } from '../../commands/schedule/events.js';
import { schedulesProjection } from '../../projections/schedule/schedules.js';
import { manualClock } from '../../src/clock.js';
import { comparePositions, type Position, START } from '../../src/eventstore/port.js';
import { features } from '../../src/features.js';
import { collectionOf, collectionsOf } from '../../src/projector/projection.js';
import { reactorCheckpoint } from '../../src/projector/reactor.js';
import { prepareWorld } from '../helpers/api-world.js';
import { startTestApp } from '../helpers/app.js';
import { lifecycle } from '../helpers/lifecycle.js';
import {
  examples,
  type Operation,
  openApiDoc,
  schemaArbitraries,
  setAt,
  targets,
} from '../helpers/openapi-requests.js';

const SEED = Number(process.env.TOTALITY_SEED ?? 30_2026);
const RUNS = Number(process.env.TOTALITY_RUNS ?? 15);
/** Whole lifecycles, each with content of its own. */
const LIFECYCLES = Number(process.env.TOTALITY_LIFECYCLES ?? 3);
/** How long the projector and reactors may take to pass one request's events. */
const SETTLE_WITHIN_MS = 10_000;

const clock = manualClock('2026-05-04T09:00:00Z');
const t = await startTestApp({ OUTBOUND_ALLOWED_RANGES: '127.0.0.0/8' }, clock);
afterAll(() => t.close());
const world = await prepareWorld(t);
const doc = await openApiDoc(t);
const { plausible } = schemaArbitraries(doc);

const projections = features.flatMap((f) => f.projections ?? []);
const reactors = features.flatMap((f) => f.reactors ?? []);

// ---- hostile values the schemas still accept -------------------------------------------------

const edgeString = fc.constantFrom(
  '',
  ' ',
  'é',
  '\u{1F600}',
  '\u202e',
  'nul\u0000inside',
  '\ud800',
  '__proto__',
  'constructor',
  'toString',
  '$where',
  'a.b',
  '../x',
  '<b>',
  '=1+1',
  'x'.repeat(200),
);
const edgeKey = fc.constantFrom('$where', '$', 'a.b', '.', '__proto__', 'constructor', '', '\u0000', 'k\u0000', 'é');
const edgeNumber = fc.constantFrom(0, -0, -1, 1, 0.5, 2 ** 31, 2 ** 53 - 1, -(2 ** 53) + 1, 1e21, 1e-7);
const edgeDate = fc.constantFrom(
  '1970-01-01T00:00:00Z',
  '2000-02-29T23:59:59.999Z',
  '2026-05-04T09:00:00+14:00',
  '2026-05-04T09:00:00-12:00',
  '9999-12-31T23:59:59Z',
);
const edgeCron = fc.constantFrom(
  '0 0 29 2 *',
  '0 0 31 * *',
  '59 23 31 12 *',
  '*/59 * * * *',
  '0 0 * * 0,6',
  '@yearly',
  '@every 1s',
  '@every 1h30m',
  '0 0 30 2 *',
  '0 0 31 4 *',
);
const edgeRrule = fc.constantFrom(
  'DTSTART:20260504T090000Z\nRRULE:FREQ=DAILY',
  'DTSTART;TZID=Europe/Berlin:20260329T023000\nRRULE:FREQ=DAILY',
  'DTSTART;TZID=Pacific/Kiritimati:20260101T000000\nRRULE:FREQ=MONTHLY;BYMONTHDAY=-1',
  'DTSTART:20260504T090000Z\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29',
  'DTSTART:20260504T090000Z\nRRULE:FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13',
  'DTSTART:20200101T000000Z\nRRULE:FREQ=WEEKLY;COUNT=2',
  'DTSTART:20260504T090000Z\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30',
  'DTSTART:19700101T000000Z\nRRULE:FREQ=MINUTELY;INTERVAL=7',
);

/** Free-form JSON at its edges: odd keys, nested close to the bound, odd leaves. */
const edgeJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.dictionary(edgeKey, fc.oneof(edgeString, edgeNumber, fc.constant(null)), { minKeys: 1, maxKeys: 3 }),
  fc
    .constantFrom(10, 60, 63)
    .chain((levels) =>
      fc.constantFrom(
        JSON.parse(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`),
        JSON.parse('['.repeat(levels) + ']'.repeat(levels)),
      ),
    ),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Something of the same kind as `current`, at its edges; the field's name says what kind of string. */
function edgeLike(current: unknown, key: string | number | undefined): fc.Arbitrary<unknown> {
  if (key === 'cron_schedule' || key === 'cron') return edgeCron;
  if (key === 'rrule') return edgeRrule;
  if (typeof current === 'string') return /^\d{4}-\d\d-\d\dT/.test(current) ? edgeDate : edgeString;
  if (typeof current === 'number') return edgeNumber;
  if (typeof current === 'boolean') return fc.boolean();
  if (Array.isArray(current)) return fc.constantFrom([], [...current, ...current]);
  if (current && typeof current === 'object') return edgeJson;
  return fc.oneof(edgeString, edgeJson);
}

const valueAt = (value: unknown, path: Array<string | number>): unknown =>
  path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), value);

const bodyFor = (name: string, op: Operation): fc.Arbitrary<unknown> => {
  const schema = op.requestBody?.content['application/json']?.schema;
  const generated = schema ? plausible(schema) : fc.constant({});
  const shaped =
    name in examples ? fc.oneof({ weight: 3, arbitrary: fc.constant(examples[name]) }, generated) : generated;
  return shaped.chain((value) =>
    fc
      .array(fc.constantFrom(...targets(value).filter((p) => p.length > 0)), { minLength: 1, maxLength: 3 })
      .chain((paths) =>
        fc
          .tuple(...paths.map((p) => edgeLike(valueAt(value, p), p.at(-1))))
          .map((swaps) => paths.reduce((v, p, i) => setAt(v, p, swaps[i]), value)),
      ),
  );
};

// ---- settling: the projector and every reactor past the head ---------------------------------

async function reactorsBehind(head: Position): Promise<string[]> {
  const behind: string[] = [];
  for (const r of reactors) {
    const at = await t.rt.docs.readCheckpoint(reactorCheckpoint(r));
    if (!at || comparePositions(at, head) < 0) behind.push(r.name);
  }
  return behind;
}

/** Events set aside so far, by read model. */
const setAsideNow = async () =>
  Object.fromEntries((await t.rt.projector.setAside()).map((s) => [s.projection, s.events]));

/** Waits until nothing more happens (reactions append events that others react to in turn); nothing new is set aside. */
async function settle(what: string): Promise<void> {
  const before = await setAsideNow();
  const deadline = Date.now() + SETTLE_WITHIN_MS;
  for (;;) {
    const head = await t.rt.events.headPosition();
    await t.rt.projector.waitFor(head);
    const behind = await reactorsBehind(head);
    if (!behind.length && comparePositions(await t.rt.events.headPosition(), head) === 0) break;
    if (Date.now() > deadline)
      throw new Error(`after ${what}: reactors ${behind.join(', ')} did not pass the events (a reaction throws?)`);
    await delay(5);
  }
  expect(await setAsideNow(), `after ${what}: events set aside`).toEqual(before);
}

/** Event types no request here makes, and where they are applied instead. */
const ELSEWHERE: Record<string, string> = {
  // Its data is the run and worker ids only (no user content); the sweeper judges presence by the
  // process's own timers, not the clock: test/api/worker/workers-sweeper.test.ts.
  RunWorkerLost: 'a worker silent past its lease, found by the sweeper',
  // A team with queued runs and no worker seen by the process's own timers for the stall threshold:
  // test/api/guardrail/limits.test.ts (the lifecycle's worker stays connected).
  QueueStalled: 'queued runs waiting with no worker connected, found by the guardrail sweeper',
  QueueStallEnded: 'a stalled queue that a worker then serves',
  RunTimedOut: 'a run in progress past its stuck or maximum time, found by the guardrail sweeper (limits.test.ts)',
};

// ---- the property ----------------------------------------------------------------------------

const writes = Object.entries(doc.paths)
  .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })))
  .filter((o) => o.method !== 'GET' && !o.path.startsWith('/webhooks/') && o.op.requestBody)
  // Deletions last, so that what the others name still exists.
  .sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));

const pathOf = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => world.existing(path, name) ?? name);

describe(`accepted requests are applied by every projection and reactor (seed ${SEED})`, () => {
  it.each(writes.map((o) => [`${o.method} ${o.path}`, o] as const))('%s', async (name, { path, method, op }) => {
    await fc.assert(
      fc.asyncProperty(bodyFor(name, op), async (body) => {
        const res = await t.app.inject({
          method: method as 'POST',
          url: pathOf(path),
          headers: {
            ...world.credentialFor(path),
            'content-type': 'application/json',
            'x-execution-id': world.execution,
          },
          payload: JSON.stringify(body),
        });
        expect(res.statusCode, `${name}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
        if (res.statusCode < 300) await settle(`${name} ${JSON.stringify(body).slice(0, 300)}`);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});

/** Moves the clock in six-hour steps, letting the scheduler (once a second) and the dispatcher see each. */
async function moveClock(ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= 6 * 3_600_000) {
    clock.advance(Math.min(left, 6 * 3_600_000));
    await delay(1_100);
    await settle(`the clock at ${clock.now().toISOString()}`);
  }
}

const content = fc.record({
  text: fc.oneof(edgeString, fc.string({ unit: 'binary', maxLength: 30 })),
  json: edgeJson,
  cron: edgeCron,
  rrule: edgeRrule,
});

describe('a whole lifecycle carries hostile content', () => {
  it('from people and factories to runs, scorers, benchmarks, branches, schedules and deletions', async () => {
    await fc.assert(
      fc.asyncProperty(content, (c) => lifecycle(t, c, settle, moveClock).then(() => undefined)),
      { seed: SEED, numRuns: LIFECYCLES, endOnFailure: true },
    );
  }, 300_000);
});

describe('afterwards', () => {
  it('time passes: schedules fire and deliveries go out, and everything is applied', async () => {
    await moveClock(2 * 86_400_000);
  }, 120_000);

  it('the events seen cover every type a projection or reactor reads, but those named with their reason', async () => {
    const read = new Set(
      [...projections, ...reactors].flatMap((p) => Object.keys(p.on)).filter((type) => !(type in ELSEWHERE)),
    );
    const seen = new Set<string>();
    for (let after = START, batch = await t.rt.events.readAll(after, 1000); batch.length; ) {
      for (const e of batch) seen.add(e.type);
      after = batch.at(-1)!.position;
      batch = await t.rt.events.readAll(after, 1000);
    }
    expect([...read].filter((type) => !seen.has(type)).sort()).toEqual([]);
  });

  it('the documents show what the deciders recorded: each schedule its last recorded next due time', async () => {
    const schedules = t.rt.readModel(schedulesProjection);
    let compared = 0;
    for await (const [id, d] of schedules.scan()) {
      const events = await t.rt.events.readStream(scheduleStream(id));
      const recorded = events.map((e) => e.data as { next_run_at?: string | null }).filter((e) => 'next_run_at' in e);
      if (!recorded.length) continue;
      expect(d.next_run_at, `schedule ${id}`).toBe(recorded.at(-1)!.next_run_at);
      compared++;
    }
    expect(compared).toBeGreaterThan(0);
  });

  it('every document is one MongoDB can store', async () => {
    const problems: string[] = [];
    for (const p of projections)
      for (const { name } of collectionsOf(p, collectionOf(p)))
        for await (const [id, d] of t.rt.docs.collection(name).scan()) {
          const problem = mongoProblem(d);
          if (problem) problems.push(`${name}/${id}: ${problem}`);
        }
    expect(problems).toEqual([]);
  });
});

/** Why MongoDB would refuse `doc`, or null: what BSON cannot encode and the server's limits. */
function mongoProblem(d: Record<string, unknown>): string | null {
  const dollar = Object.keys(d).find((k) => k.startsWith('$'));
  if (dollar) return `a top-level field named ${dollar}`;
  if (depthOf(d) > 100) return 'nested more than 100 levels';
  try {
    const bytes = BSON.calculateObjectSize(d);
    return bytes > 16 * 1024 * 1024 ? `${bytes} bytes of BSON` : (BSON.serialize(d), null);
  } catch (error) {
    return (error as Error).message;
  }
}

function depthOf(value: unknown): number {
  if (!value || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce<number>((max, v) => Math.max(max, depthOf(v)), 0);
}
