/**
 * The factory's rollups and the ranges and periods they are summed over, on hand-made histories:
 * which hour and day a run or a dollar counts in, a range edge at midnight UTC, weeks from Sunday.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LedgerEvent, Usd } from '../../../commands/analytics/events.js';
import type { RunCreatedData, RunEvent } from '../../../commands/run/events.js';
import type { NewEvent } from '../../../src/eventstore/port.js';
import { applyEvents } from '../../../src/projector/batch.js';
import { collectionOf } from '../../../src/projector/projection.js';
import { openSqliteDocumentStore } from '../../../src/readstore/sqlite.js';
import { factoryRollupsProjection, type RollupDoc } from '../../../projections/analytics/factory-rollups.js';
import { toCsv } from '../../../queries/analytics/analytics-answers.js';
import { periodIndex, resolveRange, rowsOfRange } from '../../../queries/analytics/analytics-range.js';
import { metadata, project, recorded } from '../../helpers/projection-spec.js';
import { runCreatedData } from '../../helpers/run-fixtures.js';

type Timed = NewEvent & { metadata: ReturnType<typeof metadata> };
const at = (time: string, event: RunEvent | LedgerEvent): Timed => ({ ...event, metadata: metadata(time) });

const created = (run_id: string, time: string, fields: Partial<RunCreatedData> = {}) =>
  at(time, {
    type: 'RunCreated',
    data: runCreatedData(run_id, {
      factory_uid: 'f-1',
      resolved: { model_id: 'big', harness: 'oz', agent_type: 'IMPLEMENT' },
      ...fields,
    }),
  });
const finished = (run_id: string, time: string) =>
  at(time, { type: 'RunFinished', data: { run_id, execution_id: 'x', state: 'SUCCEEDED', status_message: null } });
const leased = (run_id: string, time: string) =>
  at(time, { type: 'RunLeased', data: { run_id, worker_id: 'w', execution_id: 'x', lease_expires_at: time } });

const spent = (time: string, delta: Usd, keys = { source: 'API', user: 'u-1', agent: 'a-1', model: 'big' }) =>
  at(time, {
    type: 'RunExecutionPriced',
    data: {
      root_run_id: 'r-1',
      run_id: 'r-1',
      factory_uid: 'f-1',
      team_uid: 't-1',
      at: time,
      cause: { event_id: `e-${time}`, revision: 1 },
      price_list_revision: 0,
      credit_price_usd: 0.01,
      keys,
      delta,
      tree_total: delta,
      pr_shares: [],
      execution_id: 'x',
      runner_id: null,
      claimed_at: time,
      started_at: time,
      ended_at: time,
      compute_seconds: 0,
      platform_seconds: 0,
      compute_usd_per_hour: 0,
      platform_usd_per_hour: 0,
      usage: {
        compute_cost: 0,
        compute_cost_usd: 0,
        platform_cost: 0,
        platform_cost_usd: 0,
        compute_seconds: 0,
        platform_seconds: 0,
      },
    },
  });

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** The rollups of `events` in a real store, and the rows a range of them sums. */
async function rollupsOf(events: Timed[]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-rollups-'));
  dirs.push(dir);
  const docs = openSqliteDocumentStore(path.join(dir, 'read.db'));
  const collection = collectionOf(factoryRollupsProjection);
  await docs.ensureCollection(collection, factoryRollupsProjection.indexes);
  const log = recorded(events);
  await docs.commit(
    await applyEvents(factoryRollupsProjection, collection, (name) => docs.collection(name), log),
    collection,
    log.at(-1)!.position,
  );
  const rows = docs.collection<RollupDoc>(collection);
  return {
    rowsOf: async (start: string, end: string) =>
      (await rowsOfRange(rows, 'f-1', resolveRange({ start_date: start, end_date: end }, new Date()))).whole,
    close: () => docs.close(),
  };
}

const runs = (rows: RollupDoc[]) => rows.reduce((s, r) => s + r.runs.total, 0);

describe('run counts', () => {
  it('count a run in the hour and day it was created, under its status now', async () => {
    const docs = await project(
      factoryRollupsProjection,
      recorded([
        created('r-1', '2026-03-02T10:15:00.000Z'),
        leased('r-1', '2026-03-02T10:16:00.000Z'),
        finished('r-1', '2026-03-03T01:00:00.000Z'),
      ]),
    );
    expect(docs['day:f-1:2026-03-02T00:00:00.000Z']!.runs).toEqual({
      total: 1,
      root: 1,
      agent_type: { IMPLEMENT: 1 },
      status: { SUCCEEDED: 1 },
      source: { API: 1 },
      model: { big: 1 },
      harness: { oz: 1 },
    });
    expect((docs['hour:f-1:2026-03-02T10:00:00.000Z'] as RollupDoc).runs.status).toEqual({ SUCCEEDED: 1 });
    // It finished the next day, which counts no run.
    expect(docs['day:f-1:2026-03-03T00:00:00.000Z']).toBeUndefined();
  });

  it('count a sub-run for its tree’s factory, without a source of its own', async () => {
    const docs = await project(
      factoryRollupsProjection,
      recorded([
        created('r-1', '2026-03-02T10:00:00.000Z', { source: 'SLACK' }),
        created('c-1', '2026-03-02T10:05:00.000Z', {
          factory_uid: null,
          parent_run_id: 'r-1',
          root_run_id: 'r-1',
          depth: 1,
        }),
        created('x-1', '2026-03-02T10:06:00.000Z', { factory_uid: null }), // no factory at all: not counted
      ]),
    );
    expect(docs['day:f-1:2026-03-02T00:00:00.000Z']!.runs).toMatchObject({ total: 2, root: 1, source: { SLACK: 1 } });
    expect(docs['run:x-1']).toBeUndefined();
  });

  it('are the same when the events are applied twice', async () => {
    const log = recorded([
      created('r-1', '2026-03-02T10:15:00.000Z'),
      finished('r-1', '2026-03-02T10:30:00.000Z'),
      spent('2026-03-02T10:30:00.000Z', { inference: 1, compute: 2, platform: 3 }),
    ]);
    expect(await project(factoryRollupsProjection, log, { times: 2 })).toEqual(
      await project(factoryRollupsProjection, log),
    );
  });
});

describe('costs', () => {
  it('add each ledger entry to the hour and day it happened in, under its keys', async () => {
    const docs = await project(
      factoryRollupsProjection,
      recorded([
        spent('2026-03-02T10:30:00.000Z', { inference: 1.25, compute: 0, platform: 0 }),
        spent(
          '2026-03-02T11:30:00.000Z',
          { inference: 0, compute: 0.5, platform: 0.25 },
          { source: 'SLACK', user: 'u-2', agent: 'UNKNOWN', model: 'small' },
        ),
      ]),
    );
    const day = docs['day:f-1:2026-03-02T00:00:00.000Z']!;
    expect(day.cost).toEqual({
      total: { inference: 1.25, compute: 0.5, platform: 0.25 },
      source: {
        API: { inference: 1.25, compute: 0, platform: 0 },
        SLACK: { inference: 0, compute: 0.5, platform: 0.25 },
      },
      user: {
        'u-1': { inference: 1.25, compute: 0, platform: 0 },
        'u-2': { inference: 0, compute: 0.5, platform: 0.25 },
      },
      agent: {
        'a-1': { inference: 1.25, compute: 0, platform: 0 },
        UNKNOWN: { inference: 0, compute: 0.5, platform: 0.25 },
      },
      model: {
        big: { inference: 1.25, compute: 0, platform: 0 },
        small: { inference: 0, compute: 0.5, platform: 0.25 },
      },
    });
    expect((docs['hour:f-1:2026-03-02T11:00:00.000Z'] as RollupDoc).cost.total).toEqual({
      inference: 0,
      compute: 0.5,
      platform: 0.25,
    });
  });
});

describe('ranges', () => {
  it('include what happened at start_date’s midnight and exclude what happened at end_date’s', async () => {
    const store = await rollupsOf([
      created('before', '2026-02-28T23:59:59.999Z'),
      created('first', '2026-03-01T00:00:00.000Z'),
      created('last', '2026-03-01T23:59:59.999Z'),
      created('after', '2026-03-02T00:00:00.000Z'),
    ]);
    try {
      expect(runs(await store.rowsOf('2026-03-01T00:00:00Z', '2026-03-02T00:00:00Z'))).toBe(2);
      // A day and a half: the first whole day's row, then the hours of the next morning.
      expect(runs(await store.rowsOf('2026-02-28T12:00:00Z', '2026-03-02T12:00:00Z'))).toBe(4);
      expect(runs(await store.rowsOf('2026-03-01T00:00:00Z', '2026-03-01T23:00:00Z'))).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('are tiled by whole months, then weeks, days, six hours and hours at the edges', async () => {
    const store = await rollupsOf([
      created('jan', '2026-01-31T06:30:00.000Z'),
      created('feb-1', '2026-02-01T00:00:00.000Z'),
      created('feb-2', '2026-02-28T23:59:59.999Z'),
      created('mar', '2026-03-01T00:00:00.000Z'),
      created('mar-edge', '2026-03-02T07:00:00.000Z'),
    ]);
    try {
      const rows = await store.rowsOf('2026-01-30T05:00:00Z', '2026-03-02T07:00:00Z');
      expect(runs(rows)).toBe(4);
      expect(rows.map((r) => `${r.grain} ${r.at.slice(0, 13)}`)).toEqual([
        'day 2026-01-31T00',
        'month 2026-02-01T00',
        'day 2026-03-01T00',
      ]);
      expect(runs(await store.rowsOf('2026-01-31T07:00:00Z', '2026-03-01T00:00:00Z'))).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('count whole hours: start_date from the start of its hour, end_date to the end of its hour', () => {
    const range = resolveRange(
      { start_date: '2026-03-01T10:30:00Z', end_date: '2026-03-01T12:00:01+01:00' },
      new Date(),
    );
    expect([range.start_date, range.end_date]).toEqual(['2026-03-01T10:00:00.000Z', '2026-03-01T12:00:00.000Z']);
  });

  it('default to the 30 days before now, and refuse a start that is not before the end', () => {
    const range = resolveRange({}, new Date('2026-03-31T12:00:00Z'));
    expect([range.start_date, range.end_date]).toEqual(['2026-03-01T12:00:00.000Z', '2026-03-31T12:00:00.000Z']);
    expect(() =>
      resolveRange({ start_date: '2026-03-02T00:00:00Z', end_date: '2026-03-02T00:00:00Z' }, new Date()),
    ).toThrow(/start_date/);
  });
});

describe('periods', () => {
  it('start weeks on Sunday: a range from a Wednesday begins with the week of the Sunday before', () => {
    // 2026-03-04 is a Wednesday; the Sunday before it is 2026-03-01, the next 2026-03-08.
    const range = resolveRange(
      { start_date: '2026-03-04T00:00:00Z', end_date: '2026-03-16T00:00:00Z', group_by_period: 'week' },
      new Date(),
    );
    expect(range.periods!.map((p) => p.label)).toEqual(['2026-03-01', '2026-03-08', '2026-03-15']);
    // The first period is only the part of its week inside the range.
    expect(new Date(range.periods![0]!.from).toISOString()).toBe('2026-03-04T00:00:00.000Z');
    // Saturday night is the week of the 1st; Sunday midnight the next.
    expect(periodIndex(range, Date.parse('2026-03-07T23:59:59.999Z'))).toBe(0);
    expect(periodIndex(range, Date.parse('2026-03-08T00:00:00.000Z'))).toBe(1);
  });

  it('cut months at their first day, and refuse more than 365 periods naming group_by_period', () => {
    const months = resolveRange(
      { start_date: '2026-01-15T00:00:00Z', end_date: '2026-03-02T00:00:00Z', group_by_period: 'month' },
      new Date(),
    );
    expect(months.periods!.map((p) => p.label)).toEqual(['2026-01-01', '2026-02-01', '2026-03-01']);
    expect(
      resolveRange(
        { start_date: '2025-03-02T00:00:00Z', end_date: '2026-03-02T00:00:00Z', group_by_period: 'day' },
        new Date(),
      ).periods,
    ).toHaveLength(365);
    expect(() =>
      resolveRange(
        { start_date: '2025-03-01T00:00:00Z', end_date: '2026-03-02T00:00:00Z', group_by_period: 'day' },
        new Date(),
      ),
    ).toThrow(/at most 365 periods/);
    const refusal = (() => {
      try {
        return resolveRange(
          { start_date: '2024-01-01T00:00:00Z', end_date: '2026-03-02T00:00:00Z', group_by_period: 'day' },
          new Date(),
        );
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toMatchObject({ status: 400, errors: [{ path: 'querystring.group_by_period' }] });
    // Past three years the range itself is refused, before its periods are counted (issue #30).
    expect(() =>
      resolveRange({ start_date: '2020-01-01T00:00:00Z', end_date: '2026-03-02T00:00:00Z' }, new Date()),
    ).toThrow(/a range spans at most 1098 days/);
  });
});

describe('CSV', () => {
  it('quotes what needs quoting and keeps formula-like text as text', () => {
    expect(
      toCsv(
        ['title', 'n'],
        [
          ['=HYPERLINK("x")', -1],
          ['a, "b"', null],
          ['+1', 2.5],
        ],
      ),
    ).toBe('title,n\r\n"\'=HYPERLINK(""x"")",-1\r\n"a, ""b""",\r\n\'+1,2.5\r\n');
  });
});
