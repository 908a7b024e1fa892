/**
 * UTC periods for metrics: the binning of `group_by_period` (day, week from Sunday, month) and
 * the finer grains rollups are kept in (minute, hour), so a range is summed from a few rows of
 * each grain instead of the records themselves.
 */

export const GRAINS = ['minute', 'hour', 'day', 'week', 'month'] as const;
export type Grain = (typeof GRAINS)[number];
export type Binning = 'day' | 'week' | 'month';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The start of the `grain` holding `t` (UTC; weeks start on Sunday). */
export function periodStart(t: Date, grain: Grain): Date {
  const ms = t.getTime();
  switch (grain) {
    case 'minute':
      return new Date(ms - (((ms % MINUTE) + MINUTE) % MINUTE));
    case 'hour':
      return new Date(ms - (((ms % HOUR) + HOUR) % HOUR));
    case 'day':
      return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate()));
    case 'week':
      return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate() - t.getUTCDay()));
    case 'month':
      return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), 1));
  }
}

/** The start of the `grain` after the one starting at `start`. */
export function nextPeriod(start: Date, grain: Grain): Date {
  switch (grain) {
    case 'minute':
      return new Date(start.getTime() + MINUTE);
    case 'hour':
      return new Date(start.getTime() + HOUR);
    case 'day':
      return new Date(start.getTime() + DAY);
    case 'week':
      return new Date(start.getTime() + 7 * DAY);
    case 'month':
      return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  }
}

/** The bins of `binning` that [from, to) touches: each bin's start, in order; stops past `max` + 1. */
export function binsOf(from: Date, to: Date, binning: Binning, max = Number.POSITIVE_INFINITY): Date[] {
  const bins: Date[] = [];
  for (let b = periodStart(from, binning); b < to && bins.length <= max; b = nextPeriod(b, binning)) bins.push(b);
  return bins;
}

/** Grains a bin of `binning` is tiled with, largest first (a month holds no whole number of weeks). */
const TILES: Record<Binning, readonly Grain[]> = {
  day: ['day', 'hour', 'minute'],
  week: ['week', 'day', 'hour', 'minute'],
  month: ['month', 'day', 'hour', 'minute'],
};

/**
 * [from, to) cut into whole periods of the grains that tile `binning`, largest first: at most a
 * few of each grain at either edge, whole ones in between. `from` and `to` are whole minutes.
 */
export function tiles(from: Date, to: Date, binning: Binning): Array<{ grain: Grain; start: Date }> {
  const out: Array<{ grain: Grain; start: Date }> = [];
  let at = from;
  while (at < to) {
    const grain = TILES[binning].find((g) => periodStart(at, g).getTime() === at.getTime() && nextPeriod(at, g) <= to);
    if (!grain) throw new Error(`${at.toISOString()} is not a whole minute`);
    out.push({ grain, start: at });
    at = nextPeriod(at, grain);
  }
  return out;
}
