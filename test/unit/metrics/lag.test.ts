/**
 * Lag as Prometheus reads it, on real stores and a standing clock: the events a read model and a
 * reactor have not passed, how long the oldest of them has waited, and none once caught up.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { v4 as uuidv4 } from 'uuid';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import type { EventStore, Position } from '../../../src/eventstore/port.js';
import { openSqliteEventStore } from '../../../src/eventstore/sqlite.js';
import { measureLag } from '../../../src/metrics/lag.js';
import { createMetrics } from '../../../src/metrics/registry.js';
import type { DocumentStore } from '../../../src/readstore/port.js';
import { openSqliteDocumentStore } from '../../../src/readstore/sqlite.js';
import { metadata } from '../../helpers/projection-spec.js';
import { parseExposition, sample } from '../../helpers/prometheus.js';

let dir: string;
let events: EventStore;
let docs: DocumentStore;
const clock = manualClock('2026-03-01T10:00:00Z');
const appendAt = (at: string) =>
  events.append(
    's-1',
    [{ id: uuidv4(), type: 'Pinged', data: {}, metadata: { ...metadata(), occurred_at: at } }],
    'any',
  );
const checkpoint = (name: string, position: Position) => docs.commitAll([{ writes: [], checkpoint: name, position }]);

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-lag-'));
  events = openSqliteEventStore(path.join(dir, 'events.db'));
  docs = openSqliteDocumentStore(path.join(dir, 'read.db'));
});
afterEach(async () => {
  await events.close();
  await docs.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('lag metrics', () => {
  it('are the events not passed and the age of the oldest of them, zero once caught up', async () => {
    const metrics = createMetrics();
    const followers = {
      projections: new Map([['runs', 'runs_v1']]),
      reactors: new Map([['dispatch', 'reactor_dispatch']]),
    };
    measureLag(metrics, events, docs, clock, followers);
    const first = await appendAt('2026-03-01T09:59:00.000Z');
    await appendAt('2026-03-01T09:59:30.000Z');
    const last = await appendAt('2026-03-01T09:59:50.000Z');
    await checkpoint('reactor_dispatch', first.position);

    let s = parseExposition(await metrics.registry.metrics());
    expect(sample(s, 'shopfloor_projection_lag_events', { projection: 'runs' })).toBe(3);
    expect(sample(s, 'shopfloor_projection_lag_seconds', { projection: 'runs' })).toBe(60);
    expect(sample(s, 'shopfloor_reactor_lag_events', { reactor: 'dispatch' })).toBe(2);
    expect(sample(s, 'shopfloor_reactor_lag_seconds', { reactor: 'dispatch' })).toBe(30);

    await checkpoint('runs_v1', last.position);
    await checkpoint('reactor_dispatch', last.position);
    s = parseExposition(await metrics.registry.metrics());
    expect(sample(s, 'shopfloor_projection_lag_events', { projection: 'runs' })).toBe(0);
    expect(sample(s, 'shopfloor_projection_lag_seconds', { projection: 'runs' })).toBe(0);
    expect(sample(s, 'shopfloor_reactor_lag_seconds', { reactor: 'dispatch' })).toBe(0);
  });
});
