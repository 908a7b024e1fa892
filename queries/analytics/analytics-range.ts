/**
 * The date range and periods of the metrics and cost operations, and the rows that tile a range:
 * month rows for its whole UTC months, then week, day, six-hour and hour rows for what is left at
 * its edges (projections/analytics/grains.ts). A range counts whole UTC hours: `start_date` from
 * the start of its hour, `end_date` to the end of its hour (a date on the hour is exact), so the
 * rows sum to it exactly; the answer names the range counted.
 */
import { z } from 'zod';
import { InvalidRequest } from '../../src/kernel/errors.js';
import { dateTimeParam } from '../../src/http/schemas.js';
import type { Collection, Doc } from '../../src/readstore/port.js';
import { bucketId, GRAINS, type Grain, nextUnit, unitStart } from '../../projections/analytics/grains.js';

const MAX_PERIODS = 365;
/**
 * The longest range an answer may span: its work is the rows that tile it (a row a month, and the
 * finer rows at its ends; with periods, a row a day at most), so a bound on the range is a bound
 * on the work, checked before anything is read (issue #30).
 */
const MAX_RANGE_DAYS = 3 * 366;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The default range: this long before `end_date`. */
const DEFAULT_SPAN = 30 * DAY;

export const rangeParams = {
  start_date: dateTimeParam.optional().describe('Inclusive; default end_date minus 30 days'),
  end_date: dateTimeParam.optional().describe('Exclusive; default now'),
};
export const periodParam = {
  group_by_period: z
    .enum(['day', 'week', 'month'])
    .optional()
    .describe('Adds period_list and series aligned to it; weeks start on Sunday; at most 365 periods'),
};

interface Period {
  /** The period's start date (its label): `YYYY-MM-DD`. */
  label: string;
  /** The part of the range it covers (epoch ms). */
  from: number;
  to: number;
}

export interface Range {
  from: number;
  to: number;
  start_date: string;
  end_date: string;
  /** With group_by_period: the periods, made when first asked for (a cached answer never asks). */
  readonly periods: Period[] | null;
}

const invalid = (param: string, message: string) =>
  new InvalidRequest(message, [{ path: `querystring.${param}`, message }]);

const floorTo = (ms: number, unit: number) => Math.floor(ms / unit) * unit;
const ceilTo = (ms: number, unit: number) => Math.ceil(ms / unit) * unit;
const iso = (ms: number) => new Date(ms).toISOString();

/** How many periods of `by` the range [from, to) touches, without making them. */
function countPeriods(from: number, to: number, by: 'day' | 'week' | 'month'): number {
  const first = unitStart(from, by);
  if (by === 'day') return Math.ceil((to - first) / DAY);
  if (by === 'week') return Math.ceil((to - first) / (7 * DAY));
  const a = new Date(first);
  const b = new Date(to - 1);
  return (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth() + 1;
}

function makePeriods(from: number, to: number, by: 'day' | 'week' | 'month'): Period[] {
  const periods: Period[] = [];
  for (let p = unitStart(from, by); p < to; p = nextUnit(p, by))
    periods.push({ label: iso(p).slice(0, 10), from: Math.max(p, from), to: Math.min(nextUnit(p, by), to) });
  return periods;
}

/** The range a query asks for, at `now`: validated, aligned to hours, cut into periods. */
export function resolveRange(
  q: { start_date?: string; end_date?: string; group_by_period?: 'day' | 'week' | 'month' },
  now: Date,
): Range {
  const end = q.end_date === undefined ? now.getTime() : Date.parse(q.end_date);
  const start = q.start_date === undefined ? end - DEFAULT_SPAN : Date.parse(q.start_date);
  if (!(start < end)) throw invalid('start_date', 'start_date must be before end_date');
  const from = floorTo(start, HOUR);
  const to = ceilTo(end, HOUR);
  if (to - from > MAX_RANGE_DAYS * DAY)
    throw invalid('start_date', `a range spans at most ${MAX_RANGE_DAYS} days: choose a later start_date`);
  const by = q.group_by_period;
  if (by && countPeriods(from, to, by) > MAX_PERIODS)
    throw invalid('group_by_period', `at most ${MAX_PERIODS} periods: choose a shorter range or a longer period`);
  let periods: Period[] | null | undefined;
  return {
    from,
    to,
    start_date: iso(from),
    end_date: iso(to),
    get periods() {
      periods ??= by ? makePeriods(from, to, by) : null;
      return periods;
    },
  };
}

/** Which period of the range holds `ms`: its index, or -1 outside the range. */
export function periodIndex(range: Range, ms: number): number {
  if (ms < range.from || ms >= range.to || !range.periods) return -1;
  let lo = 0;
  let hi = range.periods.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (range.periods[mid]!.from <= ms) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Coarsest first: a range is tiled by the largest units it holds whole. */
const TILING: readonly Grain[] = [...GRAINS].reverse();

export interface Tile {
  grain: Grain;
  /** The unit's start, UTC ISO 8601. */
  at: string;
}

/**
 * The units of time that tile [from, to) exactly (both on the hour): the whole units of the
 * coarsest grain it holds, and the parts left at either end tiled alike by the finer grains.
 */
export function tilesOf(from: number, to: number, grains: readonly Grain[] = TILING): Tile[] {
  if (from >= to) return [];
  const [grain, ...finer] = grains as [Grain, ...Grain[]];
  const startOfFirst = unitStart(from, grain);
  const first = startOfFirst === from ? from : nextUnit(startOfFirst, grain);
  const last = unitStart(to, grain);
  if (first >= last) return tilesOf(from, to, finer);
  const whole: Tile[] = [];
  for (let t = first; t < last; t = nextUnit(t, grain)) whole.push({ grain, at: iso(t) });
  return [...tilesOf(from, first, finer), ...whole, ...tilesOf(last, to, finer)];
}

/**
 * The rows of `owner` (a factory, a team's repository) that tile the range, and, with periods, those
 * that tile each period (the whole range is then their union): a year at most 11 month rows and 48
 * at its ends; a year by week about 53 week rows; a year by day 365 day rows. Read by id, in
 * one request.
 */
export async function rowsOfRange<T extends Doc>(
  rows: Collection<T>,
  owner: string,
  range: Range,
): Promise<{ whole: T[]; periods: T[][] | null }> {
  const parts = range.periods ? range.periods.map((p) => tilesOf(p.from, p.to)) : [tilesOf(range.from, range.to)];
  const ids = parts.map((units) => units.map((u) => bucketId(u.grain, owner, u.at)));
  const found = await rows.getMany(ids.flat());
  const byPart = ids.map((list) => list.map((id) => found.get(id)).filter((row): row is T => row !== undefined));
  return { whole: byPart.flat(), periods: range.periods ? byPart : null };
}
