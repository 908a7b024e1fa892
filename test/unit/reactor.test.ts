import { executionAsyncId } from 'node:async_hooks';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { v4 as uuidv4 } from 'uuid';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type EventStore, type RecordedEvent, START } from '../../src/eventstore/port.js';
import { openSqliteEventStore } from '../../src/eventstore/sqlite.js';
import { metadataOf } from '../../src/kernel/handle.js';
import { type AnyReactor, reactionContext, reactor } from '../../src/projector/reactor.js';
import { runReactor } from '../../src/projector/reactor-run.js';
import type { DocumentStore } from '../../src/readstore/port.js';
import { openSqliteDocumentStore } from '../../src/readstore/sqlite.js';
import { metadata } from '../helpers/projection-spec.js';

type Pinged = { type: 'Pinged'; data: { n: number } };

let dir: string;
let events: EventStore;
let docs: DocumentStore;
const append = (type: string, n: number) =>
  events.append(`s-${n % 3}`, [{ id: uuidv4(), type, data: { n }, metadata: metadata() }], 'any');
const silent = pino({ level: 'silent' });

/** Runs `r` on the stores until the returned function stops it. */
function start(r: AnyReactor<null>, attempts = 3) {
  const stop = new AbortController();
  const running = runReactor({
    reactor: r,
    deps: null,
    events,
    docs,
    log: silent,
    signal: stop.signal,
    before: async () => {},
    settings: { attempts, backoffMs: 1 },
  });
  return async () => (stop.abort(), await running);
}

/** A reactor whose reaction to each Pinged appends an Echoed, as a command in a reaction would. */
function echoing(seen: number[]) {
  return reactor<Pinged, null>({
    name: 'echo',
    replay: 'after-last-effect',
    on: {
      Pinged: async (e) => {
        seen.push(e.data.n);
        const meta = metadataOf(reactionContext(e as RecordedEvent, new Date('2026-01-01T00:00:00.000Z')));
        await events.append(`echo-${e.data.n}`, [{ id: uuidv4(), type: 'Echoed', data: {}, metadata: meta }], 'any');
      },
    },
  });
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-reactor-'));
  events = openSqliteEventStore(path.join(dir, 'events.db'));
  docs = openSqliteDocumentStore(path.join(dir, 'read.db'));
});
afterEach(async () => {
  await events.close();
  await docs.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('reactor', () => {
  it('reacts once to each stored event of its types in order, then to live ones, and resumes from its checkpoint', async () => {
    const seen: number[] = [];
    const pinger = reactor<Pinged, null>({
      name: 'pinger',
      replay: 'all',
      on: { Pinged: async (e) => void seen.push(e.data.n) },
    });
    // More stored events than one catch-up batch, most of them of other types.
    for (let n = 0; n < 2500; n++) await append(n % 2 ? 'Pinged' : 'Other', n);

    let stop = start(pinger);
    await expect.poll(() => seen.length).toBe(1250);
    const head = await append('Other', 2500);
    await expect.poll(async () => (await docs.readCheckpoint('reactor_pinger'))?.commit).toBe(head.position.commit);
    await append('Pinged', 2501);
    await expect.poll(() => seen.length).toBe(1251);
    await stop();
    expect(seen).toEqual([...Array.from({ length: 1250 }, (_, i) => 2 * i + 1), 2501]);

    // A restart starts from the checkpoint: nothing is repeated.
    const last = await append('Pinged', 2503);
    stop = start(pinger);
    await expect.poll(async () => (await docs.readCheckpoint('reactor_pinger'))?.commit).toBe(last.position.commit);
    await stop();
    expect(seen.slice(-2)).toEqual([2501, 2503]);
  });

  it('sets aside an event whose reaction throws on every try, after its tries, and goes on with the next', async () => {
    const tries = new Map<number, number>();
    const picky = reactor<Pinged, null>({
      name: 'picky',
      replay: 'all',
      on: {
        Pinged: async (e) => {
          tries.set(e.data.n, (tries.get(e.data.n) ?? 0) + 1);
          if (e.data.n === 2) throw new Error('cannot react to 2');
        },
      },
    });
    for (let n = 1; n <= 3; n++) await append('Pinged', n);
    const stop = start(picky, 4);
    await expect.poll(() => tries.get(3)).toBe(1);
    const live = await append('Pinged', 4);
    await expect.poll(async () => (await docs.readCheckpoint('reactor_picky'))?.commit).toBe(live.position.commit);
    await stop();

    expect(Object.fromEntries(tries)).toEqual({ 1: 1, 2: 4, 3: 1, 4: 1 });
    const [setAside, ...more] = await docs.listSetAside('reactor_picky');
    expect(more).toEqual([]);
    expect(setAside).toMatchObject({ event_type: 'Pinged', stream: 's-2', error: 'Error: cannot react to 2' });
    expect((await docs.countSetAside()).get('reactor_picky')).toBe(1);
  });

  it('without a checkpoint, starts at the cause of its last recorded effect and skips the older log', async () => {
    const seen: number[] = [];
    for (let n = 1; n <= 5; n++) await append('Pinged', n);
    let stop = start(echoing(seen));
    await expect.poll(() => seen).toEqual([1, 2, 3, 4, 5]);
    await stop();

    // A fresh read store (no checkpoint); the log goes on meanwhile.
    await docs.close();
    fs.rmSync(path.join(dir, 'read.db'));
    docs = openSqliteDocumentStore(path.join(dir, 'read.db'));
    await append('Pinged', 6);
    stop = start(echoing(seen));
    // 5 caused the last recorded effect: reacted to again (its reaction may have had more to do), 1-4 not.
    await expect.poll(() => seen).toEqual([1, 2, 3, 4, 5, 5, 6]);
    await stop();
  });

  it('without a checkpoint or any recorded effect, replays the whole log (its rule gives no bound to skip to)', async () => {
    const seen: number[] = [];
    for (let n = 1; n <= 3; n++) await append('Pinged', n);
    await events.append('elsewhere', [{ id: uuidv4(), type: 'Echoed', data: {}, metadata: metadata() }], 'any');
    const stop = start(echoing(seen));
    await expect.poll(() => seen).toEqual([1, 2, 3]);
    await stop();
  });

  it('records the reactor and its cause only on commands sent by the reaction itself', async () => {
    await append('Pinged', 1);
    const [cause] = await events.readAll(START, 1);
    // Outside a reaction (a request doing a reaction's work early): nothing recorded.
    expect(reactionContext(cause!, new Date()).reaction).toBeUndefined();
    const seen: number[] = [];
    const stop = start(echoing(seen));
    await expect.poll(() => seen).toEqual([1]);
    await stop();
    const [effect] = await events.readStream('echo-1');
    expect(effect!.metadata).toMatchObject({
      causation_id: cause!.id,
      reaction: { reactor: 'echo', commit: '1', prepare: '1' },
    });
  });

  it('turns on no async hooks: every promise of the process (each request) stays as cheap as without reactors', async () => {
    await append('Pinged', 1);
    const seen: number[] = [];
    const stop = start(echoing(seen));
    await expect.poll(() => seen).toEqual([1]);
    await stop();
    // With promise hooks on (an AsyncLocalStorage used once is enough, on Node 20), a promise's
    // continuation runs under an async id of its own; without, under none.
    const idAfterAwait = async () => {
      await null;
      return executionAsyncId();
    };
    expect(await idAfterAwait()).toBe(0);
  });
});
