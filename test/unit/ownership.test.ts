/**
 * Ownership leases between processes of one store, played by several Ownership instances, each on
 * its own connection to one SQLite read store: one owner at a time, a release hands over at once,
 * a silent owner stops its own work before another takes over, and its fenced commits are refused.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listLeases, type Owned, Ownership } from '../../src/projector/ownership.js';
import { type DocumentStore, FenceLost } from '../../src/readstore/port.js';
import { openSqliteDocumentStore } from '../../src/readstore/sqlite.js';

const TTL_MS = 500;
const log = pino({ level: 'silent' });
let dir: string;
const stores: DocumentStore[] = [];

/** A process: its own connection to the store, and its leases. */
async function processOn(): Promise<{ store: DocumentStore; ownership: Ownership }> {
  const store = openSqliteDocumentStore(path.join(dir, 'read.db'));
  stores.push(store);
  const ownership = new Ownership(store, log, TTL_MS);
  await ownership.start();
  return { store, ownership };
}

/** Work that records when it ran, and holds on until its signal aborts. */
function recorder(name: string, timeline: string[]) {
  const runs: Owned[] = [];
  const work = async (owned: Owned) => {
    runs.push(owned);
    timeline.push(`${name} starts`);
    await new Promise<void>((resolve) => owned.signal.addEventListener('abort', () => resolve(), { once: true }));
    timeline.push(`${name} stops`);
  };
  return { work, runs };
}

const until = async (check: () => boolean, ms = 5000) => {
  for (const deadline = Date.now() + ms; !check(); await new Promise((r) => setTimeout(r, 10)))
    if (Date.now() > deadline) throw new Error('condition not reached in time');
};

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-ownership-'));
});
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close().catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('ownership leases', () => {
  it('gives each lease to one process at a time, and hands it over at once on release', async () => {
    const [a, b] = [await processOn(), await processOn()];
    const timeline: string[] = [];
    const first = recorder('a', timeline);
    const second = recorder('b', timeline);
    const held = a.ownership.exclusive('projector', first.work);
    await held.started;
    const waiting = b.ownership.exclusive('projector', second.work);
    await waiting.started;
    expect([held.owned, waiting.owned]).toEqual([true, false]);

    // Several renewals later b still waits: a lease renewed is never taken.
    await new Promise((r) => setTimeout(r, TTL_MS * 3));
    expect(timeline).toEqual(['a starts']);
    expect((await listLeases(a.store)).map((l) => [l.name, l.holder, l.token])).toEqual([
      ['projector', a.ownership.me, 1],
    ]);

    const stoppedAt = performance.now();
    await held.stop();
    await until(() => waiting.owned);
    // Released, so taken at the next look (a fifth of the ttl), not after a whole ttl.
    expect(performance.now() - stoppedAt).toBeLessThan(TTL_MS);
    expect(timeline).toEqual(['a starts', 'a stops', 'b starts']);
    expect(second.runs[0]!.fence.when).toEqual({ holder: b.ownership.me, token: 2 });
    await waiting.stop();
  });

  it('lets a silent owner stop its own work before another takes over, and refuses its fenced commits', async () => {
    const [a, b] = [await processOn(), await processOn()];
    const timeline: string[] = [];
    const first = recorder('a', timeline);
    const held = a.ownership.exclusive('reactor_x', first.work);
    await held.started;
    const waiting = b.ownership.exclusive('reactor_x', recorder('b', timeline).work);
    await waiting.started;
    await a.store.ensureCollection('docs', []);
    const { fence } = first.runs[0]!;
    const commit = (store: DocumentStore) =>
      store.commitAll([{ writes: [], checkpoint: 'docs', position: { commit: 1n, prepare: 1n } }], fence);
    await commit(a.store);

    // a's store stops answering (its disk, its network): it cannot renew, as if it had died.
    await a.store.close();
    const silentAt = performance.now();
    await until(() => waiting.owned);
    const takenAfter = performance.now() - silentAt;
    expect(takenAfter).toBeGreaterThanOrEqual(TTL_MS - 100);
    expect(takenAfter).toBeLessThan(TTL_MS * 3);
    // a gave up before b began: never two owners at once.
    expect(timeline).toEqual(['a starts', 'a stops', 'b starts']);
    // Whatever a still tries to write under its old token is refused (here through b's connection).
    await expect(commit(b.store)).rejects.toThrow(FenceLost);
    await held.stop();
    await waiting.stop();
  });

  it('takes a lease its dead holder never released, after watching it unrenewed for the ttl', async () => {
    const a = await processOn();
    await a.store.update('ownership', 'sweeper', {
      set: { holder: 'dead:1:x', host: 'gone', pid: 1, ttl_ms: TTL_MS, acquired_at: '', renewed_at: '', beat: 4 },
      inc: { token: 7 },
      upsert: true,
    });
    const started = performance.now();
    const x = a.ownership.exclusive('sweeper', recorder('a', []).work);
    await x.started;
    expect(x.owned).toBe(false);
    await until(() => x.owned);
    expect(performance.now() - started).toBeGreaterThanOrEqual(TTL_MS);
    expect((await listLeases(a.store))[0]).toMatchObject({ holder: a.ownership.me, token: 8, beat: 0 });
    await x.stop();
    expect((await listLeases(a.store))[0]).toMatchObject({ holder: null, token: 8 });
  });
});
