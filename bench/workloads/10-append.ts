/**
 * 1. Event store append: single-event appends from many concurrent writers (group commit) and
 * batched appends, each against raw better-sqlite3 inserts of the same rows into the same schema
 * with the same pragmas (WAL, synchronous=FULL), every case on a fresh file.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { EventMetadata, EventToAppend, ExpectedRevision } from '../../src/eventstore/port.js';
import { openSqliteEventStore } from '../../src/eventstore/sqlite.js';
import { params } from '../lib/config.js';
import { fmt, latencySummary, log, now, perSecond } from '../lib/measure.js';
import { createEventsDb } from '../lib/seed.js';
import { tempDir } from '../lib/tmp.js';
import type { Figure, Workload } from '../lib/workload.js';

const dir = tempDir('append');
let files = 0;
const freshFile = () => path.join(dir, `events-${++files}.db`);

const metadata: EventMetadata = {
  actor: { type: 'user', uid: '6a0b4cbb-3c4e-4f63-9d0e-4f0c1cf8f0a1' },
  team_uid: '0e7f3d1a-8c55-4d6b-a2d2-6f4f0a7d3b9e',
  correlation_id: '01927b3c-2d4e-7f00-8a1b-2c3d4e5f6a7b',
  causation_id: null,
  request_id: '01927b3c-2d4e-7f00-8a1b-2c3d4e5f6a7b',
  occurred_at: '2025-06-01T12:00:00.000Z',
};
/** A typical event: a factory's description changed. */
const event = (i: number): EventToAppend => ({
  id: randomUUID(),
  type: 'FactoryUpdated',
  data: {
    uid: 'c1f0e4a2-5b7d-4e8f-9a0b-1c2d3e4f5a6b',
    changes: { description: `Line ${i} of the Lisbon plant, shift 2` },
  },
  metadata,
});

const ROUNDS = 3;
const BATCH_WRITERS = 8;

interface Run {
  events: number;
  ms: number;
}
const rate = (r: Run) => perSecond(r.events, r.ms);
/** The run with the median rate. */
const median = <R extends Run>(runs: R[]): R =>
  [...runs].sort((a, b) => rate(a) - rate(b))[Math.floor(runs.length / 2)]!;

interface Row {
  stream: string;
  revision: number;
  event: EventToAppend;
}

/** Raw inserts: `groups` yields the rows of one transaction at a time (1 row: autocommit). */
async function raw(groups: (emit: (rows: Row[]) => void) => void): Promise<{ events: number; ms: number }> {
  const file = freshFile();
  await createEventsDb(file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  const insert = db.prepare(
    'INSERT INTO events (id, stream, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const one = (r: Row) =>
    insert.run(
      r.event.id,
      r.stream,
      r.revision,
      r.event.type,
      JSON.stringify(r.event.data),
      JSON.stringify(r.event.metadata),
    );
  const many = db.transaction((rows: Row[]) => rows.forEach(one));
  let events = 0;
  const start = now();
  groups((rows) => {
    if (rows.length === 1) one(rows[0]!);
    else many(rows);
    events += rows.length;
  });
  const ms = now() - start;
  db.close();
  return { events, ms };
}

/** `writers` concurrent writers, one stream each, one event per append with the exact revision. */
async function oursSingle(writers: number, total: number) {
  const store = openSqliteEventStore(freshFile());
  let issued = 0;
  const latencies: number[] = [];
  const start = now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      let expected: ExpectedRevision = 'no_stream';
      while (issued < total) {
        issued++;
        const t = now();
        const { nextRevision } = await store.append(`factory-w${w}`, [event(issued)], expected);
        latencies.push(now() - t);
        expected = nextRevision;
      }
    }),
  );
  const ms = now() - start;
  await store.close();
  return { events: issued, ms, latency: latencySummary(latencies) };
}

/** `writers` concurrent writers, `size` events per append, each append on a new stream. */
async function oursBatched(writers: number, size: number, total: number) {
  const store = openSqliteEventStore(freshFile());
  let events = 0;
  let streams = 0;
  const start = now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (events < total) {
        const batch = Array.from({ length: size }, (_, i) => event(events + i));
        events += size;
        await store.append(`factory-b${streams++}`, batch, 'no_stream');
      }
    }),
  );
  const ms = now() - start;
  await store.close();
  return { events, ms };
}

const workload: Workload = {
  title: '1. Event store append',
  async run() {
    const { singleWriters: writers, singleEvents, batchSize, batchEvents, rawSingleRowMs } = params;

    // fsync latency on a shared disk drifts over seconds: every case runs in ROUNDS rounds of a
    // ROUNDS-th of its events, ours and its raw ceiling alternately, and reports its median round.
    const singleRound = Math.ceil(singleEvents / ROUNDS / writers) * writers;
    const batchRound = Math.ceil(batchEvents / ROUNDS / (batchSize * BATCH_WRITERS)) * batchSize * BATCH_WRITERS;
    const runs = {
      rawSingleRow: [] as Run[],
      rawGrouped: [] as Run[],
      single: [] as Array<Run & { latency: ReturnType<typeof latencySummary> }>,
      rawBatched: [] as Run[],
      batched: [] as Run[],
      rawBatchedGrouped: [] as Run[],
      batchedConcurrent: [] as Run[],
    };
    for (let round = 1; round <= ROUNDS; round++) {
      log(`round ${round}/${ROUNDS}: raw, one row per transaction (at most ${rawSingleRowMs / ROUNDS} ms)`);
      runs.rawSingleRow.push(
        await raw((emit) => {
          const stop = now() + rawSingleRowMs / ROUNDS;
          for (let i = 0; i < singleRound && now() < stop; i++)
            emit([{ stream: `factory-w${i % writers}`, revision: Math.floor(i / writers), event: event(i) }]);
        }),
      );
      log(`round ${round}/${ROUNDS}: raw, ${writers} rows per transaction (the groups of group commit)`);
      runs.rawGrouped.push(
        await raw((emit) => {
          for (let i = 0; i < singleRound; i += writers) {
            emit(
              Array.from({ length: writers }, (_, w) => ({
                stream: `factory-w${w}`,
                revision: i / writers,
                event: event(i + w),
              })),
            );
          }
        }),
      );
      log(
        `round ${round}/${ROUNDS}: ours, ${writers} concurrent writers of single events (${fmt(singleRound)} events)`,
      );
      runs.single.push(await oursSingle(writers, singleRound));
      log(`round ${round}/${ROUNDS}: raw, ${batchSize} rows per transaction`);
      runs.rawBatched.push(
        await raw((emit) => {
          for (let b = 0; b * batchSize < batchRound; b++) {
            emit(
              Array.from({ length: batchSize }, (_, i) => ({
                stream: `factory-b${b}`,
                revision: i,
                event: event(b * batchSize + i),
              })),
            );
          }
        }),
      );
      log(`round ${round}/${ROUNDS}: ours, appends of ${batchSize} events, one writer (${fmt(batchRound)} events)`);
      runs.batched.push(await oursBatched(1, batchSize, batchRound));
      log(`round ${round}/${ROUNDS}: raw, ${BATCH_WRITERS * batchSize} rows per transaction`);
      runs.rawBatchedGrouped.push(
        await raw((emit) => {
          for (let b = 0; b * batchSize < batchRound; b += BATCH_WRITERS) {
            emit(
              Array.from({ length: BATCH_WRITERS * batchSize }, (_, i) => ({
                stream: `factory-b${b + Math.floor(i / batchSize)}`,
                revision: i % batchSize,
                event: event(b * batchSize + i),
              })),
            );
          }
        }),
      );
      log(
        `round ${round}/${ROUNDS}: ours, appends of ${batchSize} events, ${BATCH_WRITERS} concurrent writers (${fmt(batchRound)} events)`,
      );
      runs.batchedConcurrent.push(await oursBatched(BATCH_WRITERS, batchSize, batchRound));
    }
    const rawSingleRow = median(runs.rawSingleRow);
    const rawGrouped = median(runs.rawGrouped);
    const single = median(runs.single);
    const rawBatched = median(runs.rawBatched);
    const batched = median(runs.batched);
    const rawBatchedGrouped = median(runs.rawBatchedGrouped);
    const batchedConcurrent = median(runs.batchedConcurrent);
    const batchWriters = BATCH_WRITERS;
    const spread = (rs: Run[]) => rs.map((r) => fmt(rate(r))).join(' / ');

    const figures: Figure[] = [
      {
        name: `Single-event appends, ${writers} concurrent writers on distinct streams, exact expected revision`,
        value: rate(single),
        unit: 'events/s',
        detail: `append latency p50 ${single.latency.p50.toFixed(2)} ms, p99 ${single.latency.p99.toFixed(2)} ms`,
        ceiling: { name: `raw inserts, ${writers} rows per transaction`, value: rate(rawGrouped) },
        target: { text: '≥ 10,000 events/s', met: rate(single) >= 10_000 },
      },
      {
        name: 'Same, against raw inserts of one row per transaction (no group commit)',
        value: rate(single),
        unit: 'events/s',
        ceiling: { name: 'raw inserts, 1 row per transaction', value: rate(rawSingleRow) },
      },
      {
        name: `Batched appends, ${batchSize} events per append, one writer`,
        value: rate(batched),
        unit: 'events/s',
        detail: `${fmt(perSecond(batched.events / batchSize, batched.ms))} appends/s`,
        ceiling: { name: `raw inserts, ${batchSize} rows per transaction`, value: rate(rawBatched) },
        target: { text: '≥ 50,000 events/s', met: rate(batched) >= 50_000 },
      },
      {
        name: `Batched appends, ${batchSize} events per append, ${batchWriters} concurrent writers`,
        value: rate(batchedConcurrent),
        unit: 'events/s',
        detail: `${fmt(perSecond(batchedConcurrent.events / batchSize, batchedConcurrent.ms))} appends/s`,
        ceiling: {
          name: `raw inserts, ${batchWriters * batchSize} rows per transaction`,
          value: rate(rawBatchedGrouped),
        },
        target: { text: '≥ 50,000 events/s', met: rate(batchedConcurrent) >= 50_000 },
      },
    ];
    return {
      figures,
      notes: [
        `Each case writes a fresh file with the store's schema and pragmas (WAL, synchronous=FULL: one fsync per transaction). ` +
          `The raw cases insert the same rows with one prepared statement and serialize data and metadata with JSON.stringify, as the store does, ` +
          `but do no revision check and no savepoints.`,
        `Raw one row per transaction: ${fmt(rate(rawSingleRow))} events/s, the machine's fsync rate: the ceiling of any store that commits each event alone.`,
        `Every case ran in ${ROUNDS} rounds, alternating with its ceilings, and shows its median round (fsync latency on this shared disk drifts). ` +
          `Rounds, events/s: single ${spread(runs.single)}; raw ${writers}/transaction ${spread(runs.rawGrouped)}; raw 1/transaction ${spread(runs.rawSingleRow)}; ` +
          `batched ${spread(runs.batched)}; raw ${batchSize}/transaction ${spread(runs.rawBatched)}; ` +
          `batched ×${BATCH_WRITERS} ${spread(runs.batchedConcurrent)}; raw ${BATCH_WRITERS * batchSize}/transaction ${spread(runs.rawBatchedGrouped)}.`,
        `Event payload: a FactoryUpdated with full metadata (about 350 bytes of JSON).`,
      ],
    };
  },
};
export default workload;
