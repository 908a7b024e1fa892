import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventStore, ReadStreamOptions } from '../../src/eventstore/port.js';
import { openSqliteEventStore } from '../../src/eventstore/sqlite.js';
import { type Folder, foldedStreams } from '../../src/kernel/stream-states.js';
import { metadata } from '../helpers/projection-spec.js';

type Added = { type: 'Added'; data: { n: number } };
const sum: Folder<Added, number> = { initialState: () => 0, evolve: (total, e) => total + e.data.n };
const count: Folder<Added, number> = { initialState: () => 0, evolve: (n) => n + 1 };

/** The folded state alone, as queries read it. */
const statesOf = (events: EventStore, capacity?: number) => {
  const folded = foldedStreams(events, capacity);
  return async (folder: Folder<Added, number>, stream: string) => (await folded(folder, stream)).state;
};

describe('folded streams', () => {
  let dir: string;
  let events: EventStore;
  let reads: Array<{ stream: string; options: ReadStreamOptions | undefined; returned: number }>;
  /** The real store, noting what each read asked for and got. */
  let watched: EventStore;
  const add = (stream: string, ...ns: number[]) =>
    events.append(
      stream,
      ns.map((n) => ({ id: crypto.randomUUID(), type: 'Added', data: { n }, metadata: metadata() })),
      'any',
    );

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-states-'));
    events = openSqliteEventStore(path.join(dir, 'events.db'));
    reads = [];
    watched = Object.create(events, {
      readStream: {
        value: async (stream: string, options?: ReadStreamOptions) => {
          const found = await events.readStream(stream, options);
          reads.push({ stream, options, returned: found.length });
          return found;
        },
      },
    }) as EventStore;
  });
  afterEach(async () => {
    await events.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('folds the whole stream once, then only what was appended since', async () => {
    const state = statesOf(watched);
    await add('s', 1, 2, 3);
    expect(await state(sum, 's')).toBe(6);
    expect(await state(sum, 's')).toBe(6);
    await add('s', 10);
    expect(await state(sum, 's')).toBe(16);
    expect(reads.map((r) => [r.options?.fromRevision, r.returned])).toEqual([
      [undefined, 3],
      [3n, 0],
      [3n, 1],
    ]);
  });

  it('gives the revision of the last event folded: null before the first, then each new one', async () => {
    const folded = foldedStreams(watched);
    expect(await folded(sum, 's')).toEqual({ state: 0, revision: null });
    await add('s', 1, 2);
    expect(await folded(sum, 's')).toEqual({ state: 3, revision: 1n });
    expect(await folded(sum, 's')).toEqual({ state: 3, revision: 1n });
    await add('s', 3);
    expect(await folded(sum, 's')).toEqual({ state: 6, revision: 2n });
    expect(reads.map((r) => [r.options?.fromRevision, r.returned])).toEqual([
      [undefined, 0],
      [undefined, 2],
      [2n, 0],
      [2n, 1],
    ]);
  });

  it('starts from an empty stream and sees its first events', async () => {
    const state = statesOf(watched);
    expect(await state(sum, 'new')).toBe(0);
    await add('new', 5);
    expect(await state(sum, 'new')).toBe(5);
  });

  it('keeps one state per folder: another folder of the same stream folds it afresh', async () => {
    const state = statesOf(watched);
    await add('s', 4, 4);
    expect(await state(sum, 's')).toBe(8);
    expect(await state(count, 's')).toBe(2);
    expect(reads.at(-1)!.options?.fromRevision).toBeUndefined();
  });

  it('forgets the stream read least recently beyond its capacity', async () => {
    const state = statesOf(watched, 2);
    for (const s of ['a', 'b', 'c']) await add(s, 1);
    await state(sum, 'a');
    await state(sum, 'b');
    await state(sum, 'a'); // b is now the least recent
    await state(sum, 'c');
    reads = [];
    expect(await state(sum, 'a')).toBe(1);
    expect(await state(sum, 'b')).toBe(1);
    expect(reads.map((r) => r.options?.fromRevision)).toEqual([1n, undefined]);
  });
});
