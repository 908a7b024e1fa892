/**
 * The grains analytics figures are summed at, each a UTC calendar unit: an hour, a day, a month.
 * A range is tiled by the coarsest units it holds whole (queries/analytics/analytics-range.ts), so
 * a year is about 12 month rows, 60 day rows and 46 hour rows at its two ends.
 */
export type Grain = 'hour' | 'day' | 'month';
export const GRAINS: readonly Grain[] = ['hour', 'day', 'month'];

/** The start (UTC, ISO 8601) of the hour, day or month holding the ISO time `at`. */
export function grainStart(time: string, grain: Grain): string {
  // Code hosts' times may come without milliseconds or with an offset.
  const at = time.length === 24 && time.endsWith('Z') ? time : new Date(time).toISOString();
  if (grain === 'hour') return `${at.slice(0, 13)}:00:00.000Z`;
  if (grain === 'day') return `${at.slice(0, 10)}T00:00:00.000Z`;
  return `${at.slice(0, 7)}-01T00:00:00.000Z`;
}

/** The id of the row of `grain` starting at `start` of one owner (a factory, a team's repository). */
export const bucketId = (grain: Grain, owner: string, start: string): string => `${grain}:${owner}:${start}`;
