/**
 * Given events, then documents: runs a projection over events on a real SQLite document store,
 * the way the projector does, and can replay them to prove the projection idempotent.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { v4 as uuidv4 } from 'uuid';
import type { EventMetadata, NewEvent, RecordedEvent } from '../../src/eventstore/port.js';
import { applyEvents } from '../../src/projector/batch.js';
import { type AnyProjection, collectionOf, collectionsOf, tableOf } from '../../src/projector/projection.js';
import type { Doc } from '../../src/readstore/port.js';
import { openSqliteDocumentStore } from '../../src/readstore/sqlite.js';

export const metadata = (occurred_at = '2026-01-01T00:00:00.000Z', actor = 'u-1'): EventMetadata => ({
  actor: { type: 'user', uid: actor },
  team_uid: 't-1',
  correlation_id: 'c-1',
  causation_id: null,
  request_id: null,
  occurred_at,
});

/** Numbers events as a log would, in order. */
export const recorded = (events: Array<NewEvent & { metadata?: EventMetadata }>): RecordedEvent[] =>
  events.map((e, i) => ({
    id: uuidv4(),
    stream: 's',
    revision: BigInt(i),
    position: { commit: BigInt(i), prepare: BigInt(i) },
    type: e.type,
    data: e.data,
    metadata: e.metadata ?? metadata(),
  }));

/** Applies `events` in batches of `batchSize` (and again `times` over) and returns every document. */
export async function project(
  projection: AnyProjection,
  events: RecordedEvent[],
  { times = 1, batchSize = events.length } = {},
) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-projection-'));
  const docs = openSqliteDocumentStore(path.join(dir, 'read.db'));
  const collection = collectionOf(projection);
  try {
    for (const { name, indexes } of collectionsOf(projection, collection)) await docs.ensureCollection(name, indexes);
    for (let round = 0; round < times; round++) {
      for (let i = 0; i < events.length; i += Math.max(batchSize, 1)) {
        const batch = events.slice(i, i + Math.max(batchSize, 1));
        await docs.commit(
          await applyEvents(projection, collection, (name) => docs.collection(name), batch),
          collection,
          batch.at(-1)!.position,
        );
      }
    }
    // The read model's own documents by id, its tables' as `<table>/<id>`.
    const result: Record<string, Doc> = {};
    for await (const [id, doc] of docs.collection(collection).scan()) result[id] = doc;
    for (const table of Object.keys(projection.tables ?? {}))
      for await (const [id, doc] of docs.collection(tableOf(collection, table)).scan()) result[`${table}/${id}`] = doc;
    return result;
  } finally {
    await docs.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
