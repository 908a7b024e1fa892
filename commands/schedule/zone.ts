/**
 * Wall times of an IANA time zone and the instants they stand for. A recurrence with `TZID=` is
 * expanded in wall time (a "floating" date: the wall clock's reading, coded as if it were UTC) and
 * each due time turned into an instant here: a wall time that occurs twice (the clocks go back) is
 * the first of the two, as RFC 5545 §3.3.5 says; one that does not occur (the clocks go forward)
 * is the moment the clocks skip it, so 02:30 on a night that skips from 02:00 to 03:00 falls due
 * at 03:00, as cron does (RFC 5545 would say 03:30, after the 03:00 of the same night). Later wall
 * times are then never earlier instants.
 */

const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Whether `zone` names a time zone this runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** The wall time in `zone` at `instant` (ms), as a floating time (ms). */
export function wallTime(zone: string, instant: number): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(instant))) parts[p.type] = Number(p.value);
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall + (((instant % 1000) + 1000) % 1000);
}

/** How far the wall clock of `zone` is ahead of UTC at `instant`, in ms. */
const offsetAt = (zone: string, instant: number) => wallTime(zone, instant) - instant;

/** The instant (ms) that wall time `wall` (floating ms) of `zone` stands for. */
export function instantOf(zone: string, wall: number): number {
  const before = offsetAt(zone, wall - DAY_MS);
  const after = offsetAt(zone, wall + DAY_MS);
  // Each offset in force around that day gives a candidate; the ones that read back are real.
  const real = [before, after].map((o) => wall - o).filter((t) => offsetAt(zone, t) === wall - t);
  if (real.length) return Math.min(...real);
  // In a gap (the offset grew from `before` to `after`): the first second of the new offset.
  let [lo, hi] = [wall - after, wall - before];
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (offsetAt(zone, mid) === after) hi = mid;
    else lo = mid;
  }
  return hi;
}
