import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { v4 as uuid } from 'uuid';
import { afterAll, describe, expect, it } from 'vitest';
import { ConcurrencyError, START, type EventToAppend } from '../src/eventstore/port.js';
import { openSqliteEventStore } from '../src/eventstore/sqlite.js';
import { eventStoreContract, within } from './contract/eventstore-contract.js';
import { holdWriteLock } from './helpers/sqlite-lock.js';

const dirs: string[] = [];
/** A database file in a fresh temp dir, removed after the file's tests. */
function tempDbFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-'));
  dirs.push(dir);
  return path.join(dir, 'events.db');
}
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const event = (type: string): EventToAppend => ({
  id: uuid(),
  type,
  data: { type },
  metadata: {
    actor: { type: 'system', uid: 'test' },
    team_uid: null,
    correlation_id: uuid(),
    causation_id: null,
    request_id: null,
    occurred_at: new Date().toISOString(),
  },
});

eventStoreContract('sqlite', async () => openSqliteEventStore(tempDbFile()));

describe('sqlite event store', () => {
  it('starts empty', async () => {
    const store = openSqliteEventStore(tempDbFile());
    expect(await store.headPosition()).toEqual(START);
    expect(await store.readAll(START, 10)).toEqual([]);
    await store.close();
  });

  it('keeps events across close and reopen', async () => {
    const file = tempDbFile();
    const first = openSqliteEventStore(file);
    const written = await first.append('task-1', [event('A'), event('B')], 'no_stream');
    const before = await first.readStream('task-1');
    await first.close();

    const reopened = openSqliteEventStore(file);
    expect(await reopened.readStream('task-1')).toEqual(before);
    expect(await reopened.headPosition()).toEqual(written.position);
    // Revisions carry on where they stopped.
    expect((await reopened.append('task-1', [event('C')], 1n)).nextRevision).toBe(2n);
    await reopened.close();
  });

  it('fails only the conflicting append of a group committed together', async () => {
    const store = openSqliteEventStore(tempDbFile());
    await store.append('taken', [event('Created')], 'no_stream');

    // No await in between: all four land in the same group commit.
    const outcomes = await Promise.allSettled([
      store.append('one', [event('A')], 'no_stream'),
      store.append('taken', [event('Again')], 'no_stream'),
      store.append('two', [event('B')], 'no_stream'),
      store.append('one', [event('A2')], 0n),
    ]);

    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);
    const all = await store.readAll(START, 100);
    expect(all.map((e) => `${e.stream}:${e.type}`)).toEqual(['taken:Created', 'one:A', 'two:B', 'one:A2']);
    // The rolled-back append left no gap in the positions.
    expect(all.map((e) => e.position.commit)).toEqual([1n, 2n, 3n, 4n]);
    await store.close();
  });

  it('delivers to a subscriber events another connection wrote to the same file', async () => {
    const file = tempDbFile();
    const reader = openSqliteEventStore(file);
    const writer = openSqliteEventStore(file);
    const controller = new AbortController();
    const iterator = reader.subscribe(START, controller.signal)[Symbol.asyncIterator]();

    const next = iterator.next();
    await writer.append('task-x', [event('Foreign')], 'no_stream');
    // The reader only learns of another connection's writes by watching the file's data_version.
    const batch = await within(next);
    expect(batch.done ? [] : batch.value.map((e) => e.type)).toEqual(['Foreign']);

    controller.abort();
    await iterator.return?.();
    await writer.close();
    await reader.close();
  });

  it('decodes a new event once for all its subscribers at the head', async () => {
    const store = openSqliteEventStore(tempDbFile());
    const controller = new AbortController();
    const head = await store.headPosition();
    const iterators = [1, 2, 3].map(() => store.subscribe(head, controller.signal)[Symbol.asyncIterator]());
    const pending = iterators.map((it) => it.next());
    await store.append('task-x', [event('Shared')], 'no_stream');
    const [a, b, c] = (await Promise.all(pending.map((p) => within(p)))).map((r) => (r.done ? [] : r.value));
    expect(a!.map((e) => e.type)).toEqual(['Shared']);
    // The same object: read and parsed once, not once per subscriber.
    expect(b![0]).toBe(a![0]);
    expect(c![0]).toBe(a![0]);
    controller.abort();
    await store.close();
  });

  it('gives subscribers far apart the whole log after each one, past the shared tail it keeps', async () => {
    const store = openSqliteEventStore(tempDbFile());
    for (let i = 0; i < 5; i++)
      await store.append(
        `task-${i}`,
        Array.from({ length: 500 }, () => event('Bulk')),
        'no_stream',
      );
    const all = await store.readAll(START, 5000);
    const controller = new AbortController();
    // From the start, from within and from past the tail the first one leaves, in batches of their own.
    const subscribers = [
      { after: START, batch: 1000, skip: 0 },
      { after: all[1199]!.position, batch: 700, skip: 1200 },
      { after: all[2400]!.position, batch: 3, skip: 2401 },
    ];
    const read = await Promise.all(
      subscribers.map(async ({ after, batch, skip }) => {
        const got: string[] = [];
        for await (const events of store.subscribe(after, controller.signal, batch)) {
          got.push(...events.map((e) => e.id));
          if (got.length >= all.length - skip) break;
        }
        return got;
      }),
    );
    const ids = all.map((e) => e.id);
    expect(read).toEqual([ids, ids.slice(1200), ids.slice(2401)]);
    controller.abort();
    await store.close();
  });

  it('an append waits for a write lock another connection holds, instead of failing at once', async () => {
    const file = tempDbFile();
    const store = openSqliteEventStore(file);
    await store.append('task-l', [event('First')], 'no_stream');
    const lock = await holdWriteLock(file, 200);
    await store.append('task-l', [event('Second')], 0n);
    await lock.released;
    expect((await store.readStream('task-l')).map((e) => e.type)).toEqual(['First', 'Second']);
    await store.close();
  });

  it('reads within a turn share a snapshot, and an append decided on a stale one is refused', async () => {
    const file = tempDbFile();
    const store = openSqliteEventStore(file);
    await store.append('task-s', [event('First')], 'no_stream');
    expect((await store.readStream('task-s')).map((e) => e.type)).toEqual(['First']); // own write, same turn

    const other = new Database(file);
    other
      .prepare('INSERT INTO events (id, stream, revision, type, data, metadata) VALUES (?, ?, 1, ?, ?, ?)')
      .run(uuid(), 'task-s', 'Foreign', '{}', JSON.stringify(event('Foreign').metadata));
    other.close();
    const seen = await store.readStream('task-s'); // still the snapshot this turn opened
    expect(seen.map((e) => e.type)).toEqual(['First']);
    await expect(store.append('task-s', [event('Late')], seen.at(-1)!.revision)).rejects.toBeInstanceOf(
      ConcurrencyError,
    );
    expect((await store.readStream('task-s')).map((e) => e.type)).toEqual(['First', 'Foreign']);
    await store.close();
  });
});
