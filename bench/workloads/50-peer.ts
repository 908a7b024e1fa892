/**
 * 5. A peer on the same workload: append one event, project it into a read model, N times —
 * on Emmett's SQLite event store (inline projection, in the append's transaction) and on ours
 * (append with group commit, then wait for the live projector, as a command does).
 */
import path from 'node:path';
import {
  type Event,
  projections as emmettProjections,
  type ProjectionDefinition,
  STREAM_DOES_NOT_EXIST,
} from '@event-driven-io/emmett';
import {
  getSQLiteEventStore,
  type SQLiteConnection,
  sqliteConnection,
  type SQLiteReadEventMetadata,
} from '@event-driven-io/emmett-sqlite';
import { pino } from 'pino';
import type { EventMetadata, ExpectedRevision } from '../../src/eventstore/port.js';
import { openSqliteEventStore } from '../../src/eventstore/sqlite.js';
import { projection } from '../../src/projector/projection.js';
import { Projector } from '../../src/projector/projector.js';
import { openSqliteDocumentStore } from '../../src/readstore/sqlite.js';
import { params } from '../lib/config.js';
import { fmt, latencySummary, log, now, perSecond } from '../lib/measure.js';
import { tempDir } from '../lib/tmp.js';
import type { Figure, Workload } from '../lib/workload.js';

/** Operation i goes to stream i % STREAMS: the first round creates, the others update. */
const STREAMS = 100;

type PeerData = { uid: string; name?: string; description?: string };
const metadata: EventMetadata = {
  actor: { type: 'user', uid: '6a0b4cbb-3c4e-4f63-9d0e-4f0c1cf8f0a1' },
  team_uid: '0e7f3d1a-8c55-4d6b-a2d2-6f4f0a7d3b9e',
  correlation_id: '01927b3c-2d4e-7f00-8a1b-2c3d4e5f6a7b',
  causation_id: null,
  request_id: '01927b3c-2d4e-7f00-8a1b-2c3d4e5f6a7b',
  occurred_at: '2025-06-01T12:00:00.000Z',
};
const uidOf = (k: number) => `00000000-0000-4000-8000-${String(k).padStart(12, '0')}`;
const eventOf = (i: number, created: boolean): { type: 'FactoryCreated' | 'FactoryUpdated'; data: PeerData } =>
  created
    ? {
        type: 'FactoryCreated',
        data: { uid: uidOf(i % STREAMS), name: `Factory ${i % STREAMS}`, description: null as unknown as string },
      }
    : { type: 'FactoryUpdated', data: { uid: uidOf(i % STREAMS), description: `changed by operation ${i}` } };

/** Runs `op(i)` for i < n from `concurrency` loops; each stream is only ever used by one loop. */
async function drive(n: number, concurrency: number, op: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  const start = now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = w; i < n; i += concurrency) {
        const t = now();
        await op(i);
        latencies.push(now() - t);
      }
    }),
  );
  return { ms: now() - start, ops: n, latency: latencySummary(latencies) };
}

async function ours(dir: string, n: number, concurrency: number) {
  const events = openSqliteEventStore(path.join(dir, 'events.db'));
  const docs = openSqliteDocumentStore(path.join(dir, 'read.db'));
  const readModel = projection<
    { type: 'FactoryCreated'; data: PeerData } | { type: 'FactoryUpdated'; data: PeerData },
    PeerData & { updated_at: string }
  >({
    name: 'peer_factories',
    version: 1,
    indexes: [],
    on: {
      FactoryCreated: (e, d) => d.put(e.data.uid, { ...e.data, updated_at: e.metadata.occurred_at }),
      FactoryUpdated: (e, d) =>
        d.patch(e.data.uid, { description: e.data.description, updated_at: e.metadata.occurred_at }),
    },
  });
  const projector = new Projector(events, docs, [readModel], pino({ level: 'silent' }));
  await projector.start();
  const revisions = new Map<number, bigint>();
  const run = await drive(n, concurrency, async (i) => {
    const k = i % STREAMS;
    const expected: ExpectedRevision = revisions.get(k) ?? 'no_stream';
    const e = eventOf(i, expected === 'no_stream');
    const { nextRevision, position } = await events.append(
      `factory-${uidOf(k)}`,
      [{ id: crypto.randomUUID(), ...e, metadata }],
      expected,
    );
    revisions.set(k, nextRevision);
    await projector.waitFor(position);
  });
  const last = await docs.collection('peer_factories_v1').get(uidOf((n - 1) % STREAMS));
  await projector.stop();
  await events.close();
  await docs.close();
  if ((last as PeerData | null)?.description !== eventOf(n - 1, n - 1 < STREAMS).data.description)
    throw new Error('ours: the read model missed the last event');
  return run;
}

async function emmett(dir: string, n: number, concurrency: number) {
  const fileName = path.join(dir, 'emmett.db');
  const setup = sqliteConnection({ fileName });
  await setup.command('CREATE TABLE IF NOT EXISTS peer_factories (id TEXT PRIMARY KEY, doc TEXT NOT NULL)');
  const synchronous = await setup.querySingle<{ synchronous: number }>('PRAGMA synchronous');
  setup.close();
  /** Emmett's metadata must be a plain record type. */
  type Metadata = { [K in keyof EventMetadata]: EventMetadata[K] };
  type PeerEvent = Event<'FactoryCreated', PeerData, Metadata> | Event<'FactoryUpdated', PeerData, Metadata>;
  const readModel: ProjectionDefinition<PeerEvent, SQLiteReadEventMetadata, { connection: SQLiteConnection }> = {
    name: 'peer_factories',
    canHandle: ['FactoryCreated', 'FactoryUpdated'],
    handle: async (events, { connection }) => {
      for (const e of events) {
        const at = e.metadata.occurred_at;
        if (e.type === 'FactoryCreated') {
          await connection.command(
            'INSERT INTO peer_factories (id, doc) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc',
            [e.data.uid, JSON.stringify({ ...e.data, updated_at: at })],
          );
        } else {
          await connection.command('UPDATE peer_factories SET doc = json_patch(doc, ?) WHERE id = ?', [
            JSON.stringify({ description: e.data.description, updated_at: at }),
            e.data.uid,
          ]);
        }
      }
    },
  };
  const store = getSQLiteEventStore({ fileName, projections: emmettProjections.inline([readModel]) });
  const versions = new Map<number, bigint>();
  const failures: string[] = [];
  const run = await drive(n, concurrency, async (i) => {
    const k = i % STREAMS;
    const version = versions.get(k);
    const e = eventOf(i, version === undefined);
    // Its transaction helper logs and rolls back a failed append: count the failure and try again.
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await store.appendToStream<PeerEvent>(`factory-${uidOf(k)}`, [{ ...e, metadata } as PeerEvent], {
          expectedStreamVersion: version ?? STREAM_DOES_NOT_EXIST,
        });
        versions.set(k, result.nextExpectedStreamVersion);
        return;
      } catch (error) {
        failures.push(String((error as Error).message ?? error));
        if (attempt >= 3) throw error;
      }
    }
  });
  const check = sqliteConnection({ fileName });
  const last = await check.querySingle<{ doc: string }>('SELECT doc FROM peer_factories WHERE id = ?', [
    uidOf((n - 1) % STREAMS),
  ]);
  check.close();
  if ((JSON.parse(last?.doc ?? '{}') as PeerData).description !== eventOf(n - 1, n - 1 < STREAMS).data.description) {
    throw new Error('emmett: the read model missed the last event');
  }
  return { ...run, synchronous: synchronous?.synchronous, failures };
}

const workload: Workload = {
  title: '6. Peer: append-and-project loop, Emmett SQLite vs ours',
  async run() {
    const n = params.peerIterations;
    const c = params.peerConcurrency;
    log(`Emmett (emmett-sqlite 0.38.5), ${fmt(n)} operations, one at a time`);
    const theirs = await emmett(tempDir('peer-emmett'), n, 1);
    log(`ours, ${fmt(n)} operations, one at a time`);
    const mine = await ours(tempDir('peer-ours'), n, 1);
    log(`ours, ${fmt(n)} operations, ${c} at a time`);
    const mineConcurrent = await ours(tempDir('peer-ours-c'), n, c);

    const lat = (r: { latency: { p50: number; p99: number } }) =>
      `p50 ${r.latency.p50.toFixed(2)} ms, p99 ${r.latency.p99.toFixed(2)} ms`;
    const theirsRate = perSecond(theirs.ops, theirs.ms);
    const figures: Figure[] = [
      {
        name: 'Emmett SQLite event store, inline projection, one operation at a time',
        value: theirsRate,
        unit: 'ops/s',
        detail: `${lat(theirs)}${theirs.failures.length ? `; ${theirs.failures.length} appends failed and were retried: ${[...new Set(theirs.failures)].join('; ')}` : ''}`,
      },
      {
        name: 'Ours: append, then wait for the live projector, one operation at a time',
        value: perSecond(mine.ops, mine.ms),
        unit: 'ops/s',
        detail: lat(mine),
        ceiling: { name: 'Emmett, same loop', value: theirsRate },
      },
      {
        name: `Ours, ${c} operations at a time (group commit; Emmett's store is not driven concurrently, see notes)`,
        value: perSecond(mineConcurrent.ops, mineConcurrent.ms),
        unit: 'ops/s',
        detail: lat(mineConcurrent),
        ceiling: { name: 'Emmett, one at a time', value: theirsRate },
      },
    ];
    return {
      figures,
      notes: [
        `One operation: append one FactoryCreated/FactoryUpdated event (with our full metadata) to one of ${STREAMS} streams with the exact expected version, ` +
          `and make it visible in a JSON-document read model (create, or shallow-merge the changed fields). Each store checks the read model after the last operation.`,
        `Emmett (@event-driven-io/emmett-sqlite 0.38.5 on the sqlite3 driver; 0.42 does not install here): \`getSQLiteEventStore\` with an inline projection, ` +
          `written in the append's own transaction. PRAGMA synchronous on its connection: ${theirs.synchronous} (2 = FULL, as ours for events). ` +
          `For a file database it opens a connection per call and shares that connection object between calls in flight: with 8 concurrent ` +
          `appenders it failed with SQLITE_BUSY and "SQLITE_MISUSE: Database handle is closed" and then hung, so it is driven one operation at a time. ` +
          `The ratio of our rows is ours / Emmett.`,
        `Ours: \`openSqliteEventStore\` + \`openSqliteDocumentStore\` (separate read.db, synchronous=NORMAL) + the live \`Projector\`; ` +
          `an operation ends when \`projector.waitFor(position)\` resolves, which is what a command does before it answers.`,
      ],
    };
  },
};
export default workload;
