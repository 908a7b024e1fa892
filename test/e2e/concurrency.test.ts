// @vitest-environment node
/**
 * Two concurrent commands on one stream never both succeed against the same revision: at the
 * raw store and through the command handler (as writers in separate processes race). Through
 * the HTTP API of a real server process, commands on one stream queue, and every one lands.
 */
import path from 'node:path';
import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConcurrencyError,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type RecordedEvent,
} from '../../src/eventstore/port.js';
import { openSqliteEventStore } from '../../src/eventstore/sqlite.js';
import { Conflict } from '../../src/kernel/errors.js';
import { type CommandContext, handleCommand } from '../../src/kernel/handle.js';
import { foldedStreams } from '../../src/kernel/stream-states.js';
import { counter, type Incremented } from '../helpers/counter.js';
import { call, makeDataDir, readEvents, removeDir, type ServerProcess, startServer } from './server-process.js';

const context = (): CommandContext => ({
  now: new Date().toISOString(),
  actor: { type: 'system', uid: 'e2e' },
  teams: {},
  team_uid: null,
  correlation_id: uuidv4(),
  causation_id: null,
  request_id: null,
});

const event = (type: string): EventToAppend => ({
  id: uuidv4(),
  type,
  data: {},
  metadata: {
    actor: { type: 'system', uid: 'e2e' },
    team_uid: null,
    correlation_id: uuidv4(),
    causation_id: null,
    request_id: null,
    occurred_at: new Date().toISOString(),
  },
});

describe.sequential('concurrent writers on one stream', () => {
  let dir: string;
  let store: EventStore;
  beforeAll(() => {
    dir = makeDataDir();
    store = openSqliteEventStore(path.join(dir, 'events.db'));
  });
  afterAll(async () => {
    await store?.close();
    removeDir(dir);
  });

  /** Fires `n` appends with the same expected revision, some in one tick, some in later ones. */
  const race = (stream: string, expected: ExpectedRevision, n: number, eventsEach = 1) =>
    Promise.allSettled(
      Array.from({ length: n }, async (_, i) => {
        if (i % 3) await new Promise((r) => (i % 3 === 1 ? setImmediate(r) : setTimeout(r, 1)));
        return store.append(
          stream,
          Array.from({ length: eventsEach }, () => event(`Raced${i}`)),
          expected,
        );
      }),
    );

  it('the raw store: of concurrent appends expecting one revision, exactly one succeeds', async () => {
    const stream = `race-${uuidv4()}`;
    const created = await race(stream, 'no_stream', 20);
    expect(created.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of created.filter((r) => r.status === 'rejected')) expect(r.reason).toBeInstanceOf(ConcurrencyError);

    const next = await race(stream, 0n, 20, 2);
    expect(next.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of next.filter((r) => r.status === 'rejected')) expect(r.reason).toBeInstanceOf(ConcurrencyError);

    // The losers wrote nothing: one event from the first race, two from the second.
    const stored = await store.readStream(stream);
    expect(stored.map((e) => e.revision)).toEqual([0n, 1n, 2n]);
    expect(new Set(stored.slice(1).map((e) => e.type)).size).toBe(1);
  });

  it('the command handler: 50 concurrent commands leave an unbroken chain of decisions', async () => {
    const stream = `counter-${uuidv4()}`;
    // One kept state for all, as in the runtime: every writer starts from the same fold.
    const folded = foldedStreams(store);
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        handleCommand(store, folded, stream, counter, { type: 'Increment', data: { by: `c${i}` } }, context()),
      ),
    );
    const won = results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
    const lost = results.filter((r) => r.status === 'rejected').map((r) => r.reason as unknown);
    // A command that keeps losing the race gives up with a 409 Conflict after a few tries.
    for (const reason of lost) expect(reason).toBeInstanceOf(Conflict);
    expect(won.length).toBeGreaterThan(0);

    const stored = (await store.readStream(stream)) as unknown as Array<RecordedEvent<Incremented>>;
    expect(stored).toHaveLength(won.length);
    stored.forEach((e, i) => {
      expect(e.revision).toBe(BigInt(i));
      expect(e.data.expected_previous_count, `event ${i} was decided on the state after ${i} events`).toBe(i);
    });
    // Each winner saw its own decision applied to the state it read, and no two read the same.
    expect(won.map((h) => h.state.count).sort((a, b) => a - b)).toEqual(stored.map((_, i) => i + 1));
    expect(new Set(stored.map((e) => e.data.by)).size).toBe(won.length);
  });

  describe('over HTTP, against a real server process', () => {
    let dataDir: string;
    let server: ServerProcess | undefined;
    beforeAll(async () => {
      dataDir = makeDataDir();
      server = await startServer({ dataDir });
    });
    afterAll(async () => {
      await server?.kill('SIGKILL');
      removeDir(dataDir);
    });

    it('50 concurrent PATCHes of one factory all land, on consecutive revisions', async () => {
      const created = await call(server!, 'POST', '/factory', { name: 'contended' });
      expect(created.status).toBe(201);
      const uid = created.body!.uid as string;

      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => call(server!, 'PATCH', `/factory/${uid}`, { name: `p${i}` })),
      );
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);

      const stored = readEvents(dataDir, { stream: `factory-${uid}` });
      expect(stored.map((e) => e.revision)).toEqual(stored.map((_, i) => i));
      expect(stored.map((e) => e.type)).toEqual(['FactoryCreated', ...answers.map(() => 'FactoryUpdated')]);
      const landed = stored.slice(1).map((e) => (e.data.changes as { name: string }).name);
      expect(new Set(landed)).toEqual(new Set(answers.map((_, i) => `p${i}`)));

      const now = await call(server!, 'GET', `/factory/${uid}`);
      expect(now.body!.name).toBe(landed.at(-1));
    });
  });
});
