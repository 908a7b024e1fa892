/**
 * The grains analytics figures are summed at, each a UTC unit of time: an hour, six hours, a day,
 * a week (from Sunday, as the periods' weeks) and a month. A range is tiled by the coarsest units
 * it holds whole, then the finer ones at its ends (queries/analytics/analytics-range.ts), so a year
 * is at most 11 month rows and, at each end, 4 week, 12 day, 3 six-hour and 5 hour rows.
 */
export type Grain = 'hour' | 'six_hours' | 'day' | 'week' | 'month';
/** Finest first: a coarser row may be made again from the finer ones, which are then up to date. */
export const GRAINS: readonly Grain[] = ['hour', 'six_hours', 'day', 'week', 'month'];

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SPAN: Partial<Record<Grain, number>> = { hour: HOUR, six_hours: 6 * HOUR, day: DAY, week: 7 * DAY };

/** The start (epoch ms) of the unit of `grain` holding `ms`. */
export function unitStart(ms: number, grain: Grain): number {
  if (grain === 'month') {
    const d = new Date(ms);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
  if (grain === 'week') {
    const day = unitStart(ms, 'day');
    return day - new Date(day).getUTCDay() * DAY;
  }
  return Math.floor(ms / SPAN[grain]!) * SPAN[grain]!;
}

/** The start of the unit of `grain` after the one starting at `start`. */
export function nextUnit(start: number, grain: Grain): number {
  if (grain !== 'month') return start + SPAN[grain]!;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** The start (UTC, ISO 8601) of the unit of `grain` holding the ISO time `time`. */
export function grainStart(time: string, grain: Grain): string {
  // Code hosts' times may come without milliseconds or with an offset.
  const at = time.length === 24 && time.endsWith('Z') ? time : new Date(time).toISOString();
  // The calendar's own units are cut from the text: one event changes rows of every grain.
  if (grain === 'hour') return `${at.slice(0, 13)}:00:00.000Z`;
  if (grain === 'day') return `${at.slice(0, 10)}T00:00:00.000Z`;
  if (grain === 'month') return `${at.slice(0, 7)}-01T00:00:00.000Z`;
  return new Date(unitStart(Date.parse(at), grain)).toISOString();
}

/** The id of the row of `grain` starting at `start` of one owner (a factory, a team's repository). */
export const bucketId = (grain: Grain, owner: string, start: string): string => `${grain}:${owner}:${start}`;
