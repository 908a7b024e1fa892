/**
 * What the scheduler fires after downtime: the most recent due time, with the missed ones before
 * it recorded, not fired. The missed ones are listed up to a cap, and the most recent found by
 * halving the time left, so a long downtime or a dense recurrence costs a bounded amount of work.
 */
import { type DueTimes, HORIZON_YEARS } from './recurrence.js';

/**
 * At most this many skipped due times are listed and counted (each costs cron-parser or rrule.js
 * a step: 500 took 100 ms for an every-minute cron on first use); that many means at least.
 */
export const COUNTED_SKIPS = 100;

export interface Due {
  /** The most recent due time at or before now: the one to fire. */
  due: Date;
  /** The due times before it that were missed (downtime): not fired, recorded (the first 100). */
  skipped: Date[];
  /** How many were skipped, counted up to COUNTED_SKIPS (100: at least 100). */
  skipped_count: number;
}

/** The latest due time at or before `now`, given one (`lo`) that is: by halving the time after it. */
function latestAtOrBefore(times: DueTimes, lo: Date, now: Date): Date {
  let [latest, hi] = [lo.getTime(), now.getTime()];
  // The latest lies in [latest, hi]: none falls due after hi.
  while (hi - latest > 1) {
    const mid = latest + Math.floor((hi - latest) / 2);
    const found = times.within(new Date(mid), new Date(hi), 1)[0];
    if (found) latest = found.getTime();
    else hi = mid;
  }
  return new Date(times.within(new Date(latest), new Date(hi), 1)[0]?.getTime() ?? latest);
}

/** What is due at `now` for a schedule that last fired (or was set) at `since`; null if nothing. */
export function dueAt(times: DueTimes, since: Date, now: Date): Due | null {
  // Due times more than five years old are not looked for; the most recent one is fired all the same.
  const tooOld = new Date(now);
  tooOld.setUTCFullYear(now.getUTCFullYear() - HORIZON_YEARS);
  const found = times.within(since > tooOld ? since : tooOld, now, COUNTED_SKIPS + 1);
  const last = found.at(-1);
  if (!last) return null;
  if (found.length <= COUNTED_SKIPS) return { due: last, skipped: found.slice(0, -1), skipped_count: found.length - 1 };
  const skipped = found.slice(0, COUNTED_SKIPS);
  return { due: latestAtOrBefore(times, last, now), skipped, skipped_count: COUNTED_SKIPS };
}
