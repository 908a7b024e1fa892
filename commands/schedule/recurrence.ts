/**
 * When a schedule is due: a cron line (cron.ts: robfig/cron's grammar, in UTC) or an RFC 5545
 * recurrence (rrule.ts: `DTSTART;TZID=…` plus `RRULE:`), which keeps local times across daylight
 * saving and says what cron cannot. Pure: the time it reckons from always comes in.
 *
 * Every question asked of a recurrence is bounded in work, not only in input size: the next due
 * time is looked for five years ahead and no further, and lists of due times are capped.
 */
import { cronProblem, cronWithin, everySeconds, everyWithin } from './cron.js';
import { parseRrule, rruleWithin } from './rrule.js';

export { cronProblem } from './cron.js';

export type Recurrence = { cron: string } | { rrule: string };

/** How far ahead a next due time is looked for: a recurrence with none that soon has none. */
export const HORIZON_YEARS = 5;

const horizonOf = (after: Date) => {
  const end = new Date(after);
  end.setUTCFullYear(end.getUTCFullYear() + HORIZON_YEARS);
  return end;
};

/** Why a recurrence text is refused, or null when it is one (whether it ever falls due is not asked here). */
export function rruleProblem(text: string): string | null {
  const parsed = parseRrule(text);
  return 'problem' in parsed ? parsed.problem : null;
}

/**
 * The due times of a recurrence. `anchor` is where `@every` counts its intervals from (the time
 * the recurrence was set: deterministic, unlike robfig's "since the process started").
 */
export interface DueTimes {
  /** The due times after `after` and at or before `end`, oldest first: at most `limit` of them. */
  within(after: Date, end: Date, limit: number): Date[];
  /** The first due time after `after`, or null when there is none in the next five years. */
  nextAfter(after: Date): Date | null;
}

type Within = DueTimes['within'];

function withinOf(recurrence: Recurrence, anchor: Date): Within {
  // A recurrence recorded before the grammar it was accepted under was narrowed never falls due.
  const never: Within = () => [];
  if ('rrule' in recurrence) {
    const rule = parseRrule(recurrence.rrule);
    if ('problem' in rule) return never;
    return (after, end, limit) => rruleWithin(rule, after.getTime(), end.getTime(), limit).map((t) => new Date(t));
  }
  const { cron } = recurrence;
  if (cronProblem(cron)) return never;
  const every = everySeconds(cron);
  if (every !== null) return (after, end, limit) => everyWithin(every, anchor, after, end, limit);
  return (after, end, limit) => cronWithin(cron, after, end, limit);
}

export function dueTimes(recurrence: Recurrence, anchor: Date): DueTimes {
  const within = withinOf(recurrence, anchor);
  return { within, nextAfter: (after) => within(after, horizonOf(after), 1)[0] ?? null };
}

/** Why a recurrence set at `now` is refused: its grammar, or no due time in the next five years. */
export function recurrenceProblem(recurrence: Recurrence, now: Date): string | null {
  const problem = 'rrule' in recurrence ? rruleProblem(recurrence.rrule) : cronProblem(recurrence.cron);
  if (problem) return problem;
  return dueTimes(recurrence, now).nextAfter(now)
    ? null
    : `falls due at no time in the next ${HORIZON_YEARS} years (from ${now.toISOString()})`;
}
