import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { v4 as uuidv4 } from 'uuid';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventStore } from '../../src/eventstore/port.js';
import { openSqliteEventStore } from '../../src/eventstore/sqlite.js';
import { projection } from '../../src/projector/projection.js';
import { Projector } from '../../src/projector/projector.js';
import { rebuildProjections, verifyProjection } from '../../src/projector/rebuild.js';
import type { Doc, DocumentStore } from '../../src/readstore/port.js';
import { openSqliteDocumentStore } from '../../src/readstore/sqlite.js';
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
