import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { v4 as uuidv4 } from 'uuid';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReadModelFailed } from '../../src/kernel/errors.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { openSqliteEventStore } from '../../src/eventstore/sqlite.js';
import { projection } from '../../src/projector/projection.js';
import { Projector } from '../../src/projector/projector.js';
import { rebuildProjections, verifyProjection } from '../../src/projector/rebuild.js';
import { type Doc, type DocumentStore, isStoreFault } from '../../src/readstore/port.js';
import { openSqliteDocumentStore } from '../../src/readstore/sqlite.js';
import { holdWriteLock } from '../helpers/sqlite-lock.js';
import { metadata } from '../helpers/projection-spec.js';

type Counted = { type: 'Counted'; data: { key: string; by: number } };

/** Counts per key; `calls` shows how many events the projection was really handed. */
const counter = (version = 1, calls = { n: 0 }) =>
  projection<Counted, Doc>({
    name: 'counters',
    version,
    indexes: [['total']],
    on: {
      Counted: async (e, docs) => {
        calls.n += 1;
        const doc = await docs.get(e.data.key);
        docs.put(e.data.key, { key: e.data.key, total: ((doc?.total as number) ?? 0) + e.data.by * version });
      },
    },
  });

const log = pino({ level: 'silent' });
let dir: string;
let events: EventStore;
let docs: DocumentStore;

const open = () => {
  events = openSqliteEventStore(path.join(dir, 'events.db'));
  docs = openSqliteDocumentStore(path.join(dir, 'read.db'));
};
const count = (key: string, by = 1) =>
  events.append(`counter-${key}`, [{ id: uuidv4(), type: 'Counted', data: { key, by }, metadata: metadata() }], 'any');

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-projector-'));
  open();
});
afterEach(async () => {
  await events.close();
  await docs.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('projector', () => {
  it('makes an append visible once waitFor resolves, and is ready after catching up', async () => {
    await count('a');
    const projector = new Projector(events, docs, [counter()], log);
    await projector.start();
    const { position } = await count('a', 2);
    await projector.waitFor(position);
    expect(await docs.collection('counters_v1').get('a')).toEqual({ key: 'a', total: 3 });
    expect(projector.isReady).toBe(true);
    expect(projector.status()[0]!.position).toEqual(position);
    await projector.stop();
  });

  it('resumes from its checkpoint after a restart, handling each event once', async () => {
    const calls = { n: 0 };
    let projector = new Projector(events, docs, [counter(1, calls)], log);
    await projector.start();
    for (let i = 0; i < 5; i++) await count('k');
    await projector.waitFor(await events.headPosition());
    await projector.stop();
    await events.close();
    await docs.close();

    open();
    for (let i = 0; i < 3; i++) await count('k');
    projector = new Projector(events, docs, [counter(1, calls)], log);
    await projector.start();
    await projector.waitFor(await events.headPosition());
    expect(calls.n).toBe(8);
    expect(await docs.collection('counters_v1').get('k')).toEqual({ key: 'k', total: 8 });
    await projector.stop();
  });

  it('loads a read model that starts from nothing as a rebuild does, then follows the log', async () => {
    for (const key of ['p', 'q', 'p']) await count(key);
    const lines: string[] = [];
    const recorded = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const projector = new Projector(events, docs, [counter()], recorded);
    await projector.start();
    await expect.poll(() => projector.isReady).toBe(true);
    expect(lines.some((l) => l.includes('loading new read models from the log'))).toBe(true);
    expect(await docs.collection('counters_v1').get('p')).toEqual({ key: 'p', total: 2 });
    expect(await docs.readCheckpoint('counters_v1')).toEqual(await events.headPosition());
    // Its indexes were built once it was loaded.
    expect(
      await docs.collection('counters_v1').find({ filter: { total: 1 }, sort: [['id', 'asc']], limit: 5 }),
    ).toMatchObject({ items: [{ key: 'q' }] });
    const index = new Database(path.join(dir, 'read.db'), { readonly: true });
    expect(
      index
        .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'counters_v1' AND sql IS NOT NULL`)
        .pluck()
        .all(),
    ).toEqual(['counters_v1:total']);
    index.close();

    await projector.waitFor((await count('q', 5)).position);
    expect(await docs.collection('counters_v1').get('q')).toEqual({ key: 'q', total: 6 });
    await projector.stop();
  });

  it('builds a new version beside the old one and drops the old one once caught up', async () => {
    const v1 = new Projector(events, docs, [counter(1)], log);
    await v1.start();
    await count('b', 5);
    await v1.waitFor(await events.headPosition());
    await v1.stop();

    const v2 = new Projector(events, docs, [counter(2)], log);
    await v2.start();
    await v2.waitFor(await events.headPosition());
    expect(await docs.collection('counters_v2').get('b')).toEqual({ key: 'b', total: 10 });
    await expect.poll(() => docs.listCollections()).not.toContain('counters_v1');
    await v2.stop();
  });

  it('rebuilds into a shadow and swaps it in; verify finds no difference, then finds a tampered one', async () => {
    const p = counter();
    const projector = new Projector(events, docs, [p], log);
    await projector.start();
    for (const key of ['x', 'y', 'x', 'z']) await count(key);
    await projector.waitFor(await events.headPosition());
    await projector.stop();

    const before = await docs.collection('counters_v1').get('x');
    expect(await rebuildProjections(events, docs, [p])).toBe(4);
    expect(await docs.collection('counters_v1').get('x')).toEqual(before);
    expect(await docs.readCheckpoint('counters_v1')).toEqual(await events.headPosition());
    expect(await verifyProjection(events, docs, p)).toEqual([]);

    await docs.commit(
      [{ collection: 'counters_v1', id: 'y', doc: { key: 'y', total: 99 }, position: await events.headPosition() }],
      'counters_v1',
      await events.headPosition(),
    );
    expect(await verifyProjection(events, docs, p)).toEqual([
      { id: 'y', live: { key: 'y', total: 99 }, rebuilt: { key: 'y', total: 1 } },
    ]);
    expect(await docs.listCollections()).toEqual(['counters_v1']);
  });

  it('steps aside when a rebuild swaps in a collection under it, applying no event twice', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let gated = false;
    const p = projection<Counted, Doc>({
      name: 'counters',
      version: 1,
      indexes: [],
      on: {
        Counted: async (e, docs) => {
          // The live projector's first look at the gate event waits until the rebuild is done.
          if (e.data.key === 'gate' && !gated) await ((gated = true), gate);
          const doc = await docs.get(e.data.key);
          docs.put(e.data.key, { key: e.data.key, total: ((doc?.total as number) ?? 0) + e.data.by });
        },
      },
    });
    const projector = new Projector(events, docs, [p], log);
    await projector.start();
    await projector.waitFor((await count('a')).position);
    const blocked = await count('gate');
    await expect.poll(() => gated).toBe(true);
    await rebuildProjections(events, docs, [p]);
    release();
    await projector.waitFor(blocked.position);
    await projector.waitFor((await count('gate')).position);
    expect(await docs.collection('counters_v1').get('gate')).toEqual({ key: 'gate', total: 2 });
    expect(await verifyProjection(events, docs, p)).toEqual([]);
    await projector.stop();
  });

  it('rebuilds a log of many pages and commits: a document changed in every one comes out whole', async () => {
    const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const total = 45_000;
    for (let i = 0; i < total; i += 500) {
      const batch = Array.from({ length: 500 }, (_, j) => ({
        id: uuidv4(),
        type: 'Counted',
        data: { key: keys[(i + j) % keys.length]!, by: 1 },
        metadata: metadata(),
      }));
      await events.append('counter-many', batch, 'any');
    }
    const progress: number[] = [];
    expect(await rebuildProjections(events, docs, [counter()], (p) => progress.push(p.events))).toBe(total);
    expect(progress).toEqual([20_000, 40_000, 45_000]); // one commit per 20,000 events, read 2,000 at a time
    const counted = await docs.collection('counters_v1').getMany(keys);
    expect(keys.map((k) => counted.get(k)?.total)).toEqual(keys.map((_, i) => Math.ceil((total - i) / keys.length)));
    expect(await docs.readCheckpoint('counters_v1')).toEqual(await events.headPosition());
  });

  it('rebuilds several read models in one pass, reading only the types they handle', async () => {
    type Noted = { type: 'Noted'; data: { key: string } };
    const notes = projection<Noted, Doc>({
      name: 'notes',
      version: 1,
      indexes: [],
      on: { Noted: (e, docs) => docs.put(e.data.key, { key: e.data.key }) },
    });
    const calls = { n: 0 };
    const counters = counter(1, calls);
    const projector = new Projector(events, docs, [counters, notes], log);
    await projector.start();
    await count('a');
    await events.append('noise', [{ id: uuidv4(), type: 'Ignored', data: {}, metadata: metadata() }], 'any');
    await events.append('note-n', [{ id: uuidv4(), type: 'Noted', data: { key: 'n' }, metadata: metadata() }], 'any');
    const last = await events.append(
      'noise',
      [{ id: uuidv4(), type: 'Ignored', data: {}, metadata: metadata() }],
      'any',
    );
    await projector.waitFor(last.position);
    await projector.stop();
    // One transaction per batch carried both read models to the head.
    expect(await docs.readCheckpoint('counters_v1')).toEqual(last.position);
    expect(await docs.readCheckpoint('notes_v1')).toEqual(last.position);

    calls.n = 0;
    expect(await rebuildProjections(events, docs, [counters, notes])).toBe(2);
    expect(calls.n).toBe(1);
    expect(await docs.collection('counters_v1').get('a')).toEqual({ key: 'a', total: 1 });
    expect(await docs.collection('notes_v1').get('n')).toEqual({ key: 'n' });
    // The checkpoint is the head, past the last event either handles.
    expect(await docs.readCheckpoint('counters_v1')).toEqual(last.position);
    expect(await docs.readCheckpoint('notes_v1')).toEqual(last.position);
    expect(await docs.listCollections()).toEqual(['counters_v1', 'notes_v1']);
  });
});

/** Counts per key as `counter` does, but its handler throws on the key 'poison' (until fixed). */
const fragile = (calls = { n: 0 }, fixed = false) =>
  projection<Counted, Doc>({
    name: 'counters',
    version: 1,
    indexes: [],
    on: {
      Counted: async (e, docs) => {
        calls.n += 1;
        const doc = await docs.get(e.data.key);
        // Changes made before the throw must not survive it.
        docs.put(e.data.key, { key: e.data.key, total: ((doc?.total as number) ?? 0) + e.data.by });
        if (e.data.key === 'poison' && !fixed) throw new Error('cannot count poison');
      },
    },
  });

/** Another read model of the same events, which applies them all. */
const tally = projection<Counted, Doc>({
  name: 'tally',
  version: 1,
  indexes: [],
  on: { Counted: (e, docs) => docs.put(e.data.key, { key: e.data.key }) },
});

type Configured = { type: 'Configured'; data: { key: string; config: unknown } };
/** Stores each config as it comes: the SQLite read store refuses JSON nested over 1,000 deep. */
const configs = projection<Configured, Doc>({
  name: 'configs',
  version: 1,
  indexes: [],
  on: { Configured: (e, docs) => docs.put(e.data.key, { key: e.data.key, config: e.data.config }) },
});
const nested = (depth: number): unknown => {
  let v: unknown = [];
  for (let i = 1; i < depth; i++) v = [v];
  return v;
};
const configured = (keys: Array<[string, unknown]>) =>
  events.append(
    'configs',
    keys.map(([key, config]) => ({ id: uuidv4(), type: 'Configured', data: { key, config }, metadata: metadata() })),
    'any',
  );

/** A logger that keeps its lines, parsed. */
const recording = () => {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, log: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }) };
};
const setAsideLines = (lines: Array<Record<string, unknown>>) => lines.filter((l) => /set aside/.test(String(l.msg)));

/** Counts per key, and in a table of its own, which keys were counted how often. */
const withTable = (version = 1) =>
  projection<Counted, Doc, { seen: { times: number } }>({
    name: 'tallies',
    version,
    indexes: [],
    tables: { seen: [['times']] },
    on: {
      Counted: async (e, docs) => {
        const doc = await docs.get(e.data.key);
        docs.put(e.data.key, { total: ((doc?.total as number) ?? 0) + e.data.by });
        const seen = await docs.in('seen').get(e.data.key);
        docs.in('seen').put(e.data.key, { times: (seen?.times ?? 0) + 1 });
      },
    },
  });

describe('projector: read models with tables', () => {
  it('keeps a table beside the read model, rebuilds, verifies and supersedes it with the read model', async () => {
    const p = withTable();
    const projector = new Projector(events, docs, [p], log);
    await projector.start();
    for (const key of ['x', 'y', 'x']) await count(key, 2);
    await projector.waitFor(await events.headPosition());
    await projector.stop();
    expect(await docs.collection('tallies_v1').get('x')).toEqual({ total: 4 });
    expect(await docs.collection('tallies_v1__seen').get('x')).toEqual({ times: 2 });

    expect(await rebuildProjections(events, docs, [p])).toBe(3);
    expect(await docs.collection('tallies_v1__seen').get('x')).toEqual({ times: 2 });
    expect(await verifyProjection(events, docs, p)).toEqual([]);
    await docs.commit(
      [{ collection: 'tallies_v1__seen', id: 'y', doc: { times: 7 }, position: await events.headPosition() }],
      'tallies_v1',
      await events.headPosition(),
    );
    expect(await verifyProjection(events, docs, p)).toEqual([
      { id: 'tallies_v1__seen/y', live: { times: 7 }, rebuilt: { times: 1 } },
    ]);
    expect(await docs.listCollections()).toEqual(['tallies_v1', 'tallies_v1__seen']);

    const v2 = new Projector(events, docs, [withTable(2)], log);
    await v2.start();
    await v2.waitFor(await events.headPosition());
    await expect.poll(() => docs.listCollections()).toEqual(['tallies_v2', 'tallies_v2__seen']);
    await v2.stop();
  });

  it('refuses a table named like a shadow', () => {
    expect(() => projection({ name: 'x', version: 1, indexes: [], tables: { rebuild: [] }, on: {} })).toThrow(/table/);
  });
});

describe('projector: events a read model cannot apply', () => {
  it('sets aside an event its handler throws on, for that read model only, goes on past it, and keeps the record over a restart', async () => {
    const calls = { n: 0 };
    const { lines, log: recorded } = recording();
    let projector = new Projector(events, docs, [fragile(calls), tally], recorded);
    await projector.start();
    await count('a');
    const poison = await count('poison', 5);
    const last = await count('b');
    await projector.waitFor(last.position);

    const counters = docs.collection('counters_v1');
    expect(await counters.get('a')).toEqual({ key: 'a', total: 1 });
    expect(await counters.get('b')).toEqual({ key: 'b', total: 1 });
    expect(await counters.get('poison')).toBeNull(); // its put before the throw was undone
    expect(await docs.collection('tally_v1').get('poison')).toEqual({ key: 'poison' });
    expect(await docs.readCheckpoint('counters_v1')).toEqual(last.position);
    expect(await docs.listSetAside()).toEqual([
      {
        checkpoint: 'counters_v1',
        position: poison.position,
        stream: 'counter-poison',
        revision: 0n,
        event_id: expect.any(String),
        event_type: 'Counted',
        metadata: metadata(),
        error: 'Error: cannot count poison',
        at: expect.any(String),
      },
    ]);
    expect(setAsideLines(lines)).toEqual([
      expect.objectContaining({
        level: 50,
        read_model: 'counters',
        stream: 'counter-poison',
        position: poison.position.commit.toString(),
        event_type: 'Counted',
        error: 'Error: cannot count poison',
      }),
    ]);
    expect(await projector.setAside()).toEqual([{ projection: 'counters', version: 1, events: 1 }]);
    await projector.stop();

    // A restart neither tries it again nor forgets it.
    calls.n = 0;
    projector = new Projector(events, docs, [fragile(calls), tally], log);
    await projector.start();
    await projector.waitFor((await count('c')).position);
    expect(calls.n).toBe(1);
    expect(await projector.setAside()).toEqual([{ projection: 'counters', version: 1, events: 1 }]);
    expect(setAsideLines(lines)).toHaveLength(1);
    await projector.stop();
  });

  it('finds the one event whose documents the store refuses by halving the batch, and writes the rest of it', async () => {
    const { lines, log: recorded } = recording();
    const projector = new Projector(events, docs, [configs, tally], recorded);
    await projector.start();
    const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
    // One append, so one batch: the deep config is the 23rd of 40.
    const { position } = await configured(keys.map((k, i) => [k, i === 22 ? nested(1001) : { i }]));
    await projector.waitFor(position);
    await projector.waitFor((await count('after')).position);

    const stored = await docs.collection('configs_v1').getMany(keys);
    expect([...stored.keys()].sort()).toEqual(keys.filter((k) => k !== 'k22').sort());
    const [skipped, ...more] = await docs.listSetAside();
    expect(more).toEqual([]);
    expect(skipped).toMatchObject({
      checkpoint: 'configs_v1',
      position: { commit: position.commit - 17n },
      event_type: 'Configured',
      error: 'SqliteError: malformed JSON',
    });
    expect(await docs.collection('tally_v1').get('after')).toEqual({ key: 'after' });
    expect(setAsideLines(lines)).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'projector failed; resuming from the last checkpoints')).toEqual([]);
    await projector.stop();
  });

  it('answers a command waiting for its own events at once when one was set aside, on any of its streams', async () => {
    const projector = new Projector(events, docs, [fragile()], log);
    await projector.start();
    // One command (one context, so one metadata) writes two streams and waits after the second.
    const request = metadata('2026-01-02T00:00:00.000Z');
    const counted = (stream: string, key: string, m = request) =>
      events.append(stream, [{ id: uuidv4(), type: 'Counted', data: { key, by: 1 }, metadata: m }], 'any');
    await counted('counter-poison', 'poison');
    const second = await counted('counter-other', 'other');
    const started = performance.now();
    await expect(projector.waitFor(second.position, request)).rejects.toBeInstanceOf(ReadModelFailed);
    await expect(projector.waitFor(second.position, request)).rejects.toMatchObject({
      status: 500,
      code: 'read_model_failed',
      retryable: false,
      message: expect.stringMatching(/^The change was saved, but the read model counters could not apply it/),
    });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(await docs.collection('counters_v1').get('other')).toEqual({ key: 'other', total: 1 });

    // Waiting without naming one's own events (a reactor) is not held up, nor is a later command
    // on the same stream whose own events apply.
    await projector.waitFor(second.position);
    const later = metadata('2026-01-02T00:00:01.000Z');
    await projector.waitFor((await counted('counter-poison', 'fine', later)).position, later);
    expect(await docs.collection('counters_v1').get('fine')).toEqual({ key: 'fine', total: 1 });
    await projector.stop();
  });

  it('loads, rebuilds and verifies past such events the same way; a rebuild after the fix applies them', async () => {
    await count('a');
    await count('poison', 2);
    await configured([
      ['deep', nested(1001)],
      ['fine', 1],
    ]);
    await count('b');
    const head = await events.headPosition();
    // A new read model is loaded as a rebuild loads it.
    const projector = new Projector(events, docs, [fragile(), configs], log);
    await projector.start();
    await projector.waitFor(head);
    await projector.stop();
    const setAside = async () => (await docs.listSetAside()).map((e) => [e.checkpoint, e.event_type]);
    expect(await setAside()).toEqual([
      ['configs_v1', 'Configured'],
      ['counters_v1', 'Counted'],
    ]);
    expect(await docs.collection('configs_v1').get('fine')).toEqual({ key: 'fine', config: 1 });
    expect(await docs.readCheckpoint('configs_v1')).toEqual(head);

    // Verify skips them as the live read model did: the documents agree.
    expect(await verifyProjection(events, docs, fragile())).toEqual([]);
    expect(await verifyProjection(events, docs, configs)).toEqual([]);
    expect(await rebuildProjections(events, docs, [fragile(), configs])).toBe(5);
    expect(await setAside()).toEqual([
      ['configs_v1', 'Configured'],
      ['counters_v1', 'Counted'],
    ]);

    // After the fix, a rebuild applies the event in its place and clears the record.
    expect(await rebuildProjections(events, docs, [fragile({ n: 0 }, true)])).toBe(3);
    expect(await docs.collection('counters_v1').get('poison')).toEqual({ key: 'poison', total: 2 });
    expect(await setAside()).toEqual([['configs_v1', 'Configured']]);
    expect(await verifyProjection(events, docs, fragile({ n: 0 }, true))).toEqual([]);
  });

  it('sets nothing aside for a fault of the store itself: it retries until the store answers', async () => {
    const { lines, log: recorded } = recording();
    const projector = new Projector(events, docs, [configs], recorded);
    await projector.start();
    await projector.waitFor((await configured([['first', 1]])).position);
    // Longer than the store's busy timeout (5 s): the commit fails with SQLITE_BUSY.
    const lock = await holdWriteLock(path.join(dir, 'read.db'), 5500);
    const { position } = await configured([['second', 2]]);
    await lock.released;
    await expect.poll(() => docs.readCheckpoint('configs_v1'), { timeout: 15_000 }).toEqual(position);
    expect(await docs.collection('configs_v1').get('second')).toEqual({ key: 'second', config: 2 });
    expect(await docs.listSetAside()).toEqual([]);
    expect(lines.some((l) => l.msg === 'projector failed; resuming from the last checkpoints')).toBe(true);
    expect(projector.isFailing).toBe(false);
    await projector.stop();
  });

  it('tells the store’s own faults from refused documents', () => {
    expect(isStoreFault(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))).toBe(true);
    expect(isStoreFault(Object.assign(new Error('disk full'), { code: 'SQLITE_FULL' }))).toBe(true);
    expect(isStoreFault(Object.assign(new Error('x'), { name: 'MongoNetworkError' }))).toBe(true);
    expect(isStoreFault(Object.assign(new Error('malformed JSON'), { code: 'SQLITE_ERROR' }))).toBe(false);
    expect(isStoreFault(new Error('cannot count poison'))).toBe(false);
  });
});
