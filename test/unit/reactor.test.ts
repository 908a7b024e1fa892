import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { v4 as uuidv4 } from 'uuid';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventStore } from '../../src/eventstore/port.js';
import { openSqliteEventStore } from '../../src/eventstore/sqlite.js';
import { reactor, runReactor } from '../../src/projector/reactor.js';
import type { DocumentStore } from '../../src/readstore/port.js';
import { openSqliteDocumentStore } from '../../src/readstore/sqlite.js';
import { metadata } from '../helpers/projection-spec.js';

type Pinged = { type: 'Pinged'; data: { n: number } };

let dir: string;
let events: EventStore;
let docs: DocumentStore;
const append = (type: string, n: number) =>
  events.append(`s-${n % 3}`, [{ id: uuidv4(), type, data: { n }, metadata: metadata() }], 'any');

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
    const pinger = reactor<Pinged, null>({ name: 'pinger', on: { Pinged: async (e) => void seen.push(e.data.n) } });
    // More stored events than one catch-up batch, most of them of other types.
    for (let n = 0; n < 2500; n++) await append(n % 2 ? 'Pinged' : 'Other', n);
    const start = () => {
      const stop = new AbortController();
      const running = runReactor(pinger, null, events, docs, pino({ level: 'silent' }), stop.signal, async () => {});
      return async () => (stop.abort(), await running);
    };

    let stop = start();
    await expect.poll(() => seen.length).toBe(1250);
    const head = await append('Other', 2500);
    await expect.poll(async () => (await docs.readCheckpoint('reactor_pinger'))?.commit).toBe(head.position.commit);
    await append('Pinged', 2501);
    await expect.poll(() => seen.length).toBe(1251);
    await stop();
    expect(seen).toEqual([...Array.from({ length: 1250 }, (_, i) => 2 * i + 1), 2501]);

    // A restart starts from the checkpoint: nothing is repeated.
    const last = await append('Pinged', 2503);
    stop = start();
    await expect.poll(async () => (await docs.readCheckpoint('reactor_pinger'))?.commit).toBe(last.position.commit);
    await stop();
    expect(seen.slice(-2)).toEqual([2501, 2503]);
  });
});
