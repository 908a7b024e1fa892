/**
 * RFC 5545 recurrences: one `DTSTART` (with `TZID=` for a local time), one `RRULE`, and `EXDATE`
 * and `RDATE` lists, expanded by rrule.js within a bound on work.
 *
 * rrule.js iterates from DTSTART, one period (year, month, … minute) at a time, and through a
 * stretch with no occurrence all the way to the year 9999: UNTIL is compared with occurrences
 * only. So each expansion here starts from a DTSTART moved to the moment asked about (into a
 * period the rule counts from its own DTSTART, with the defaults that DTSTART gave), and rrule.js
 * is stopped once it has taken the steps the span asked about needs. The rule is expanded in wall
 * time (rrule.js's "floating" dates) and each due time turned into an instant by `zone.ts`.
 */
import rrulePackage from 'rrule';
import { rruleGrammarProblem, stepProblem } from './rrule-grammar.js';
import { instantOf, wallTime } from './zone.js';

const { RRule, rrulestr, Frequency } = rrulePackage;
type Options = InstanceType<typeof RRule>['options'];

const DAY_MS = 86_400_000;
const UNIT_MS: Partial<Record<number, number>> = { [Frequency.HOURLY]: 3_600_000, [Frequency.MINUTELY]: 60_000 };

/** A recurrence as accepted: its rule in wall time, and its extra and excluded wall times. */
export interface Rrule {
  options: Options;
  zone: string | null;
  rdates: readonly number[];
  exdates: ReadonlySet<number>;
}

/** The recurrence of `text`, or why it is refused. */
export function parseRrule(text: string): Rrule | { problem: string } {
  const problem = rruleGrammarProblem(text);
  if (problem) return { problem };
  let set: ReturnType<typeof rrulestr>;
  try {
    set = rrulestr(text, { forceset: true }) as ReturnType<typeof rrulestr>;
  } catch (error) {
    return { problem: `not an RFC 5545 recurrence: ${(error as Error).message}` };
  }
  if (!('rrules' in set)) return { problem: 'give DTSTART, then RRULE:' };
  const parsed = set.rrules()[0]!.options;
  // rrule.js emits a day's times in the order BYHOUR, BYMINUTE and BYSECOND list them.
  const sorted = (values: number[]) => values && [...values].sort((a, b) => a - b);
  const { byhour, byminute, bysecond } = parsed;
  const options = {
    ...parsed,
    tzid: null,
    byhour: sorted(byhour),
    byminute: sorted(byminute),
    bysecond: sorted(bysecond),
  };
  const stepping = stepProblem(options);
  if (stepping) return { problem: stepping };
  if (options.freq === Frequency.MINUTELY && options.byhour?.length) Object.assign(options, minutesOfDay(options));
  const zone = set.tzid();
  return {
    options,
    zone: zone && zone.toUpperCase() !== 'UTC' ? zone : null,
    rdates: set.rdates().map((d) => d.getTime()),
    exdates: new Set(set.exdates().map((d) => d.getTime())),
  };
}

/**
 * A minutely rule with BYHOUR (its INTERVAL divides 60) as the daily rule of the same times:
 * every minute INTERVAL reaches in each hour BYHOUR names. rrule.js steps the minutely form
 * wrongly across a day its BYDAY or BYMONTH leaves out (it skips hours by the day's remaining
 * minutes, so whole days), and one step a minute where the daily form takes one a day.
 */
function minutesOfDay(o: Options): Partial<Options> {
  const first = o.dtstart.getUTCMinutes() % o.interval;
  const reached = Array.from({ length: 60 / o.interval }, (_, k) => first + k * o.interval);
  const byminute = o.byminute?.length ? reached.filter((m) => o.byminute.includes(m)) : reached;
  return { freq: Frequency.DAILY, interval: 1, byminute };
}

const yearOf = (ms: number) => new Date(ms).getUTCFullYear();
const monthOf = (ms: number) => yearOf(ms) * 12 + new Date(ms).getUTCMonth();
const dayOf = (ms: number) => Math.floor(ms / DAY_MS);
/** The first day of the week (as WKST says, 0 = Monday) that holds day `day` (1970-01-01 was a Thursday). */
const weekStartOf = (day: number, wkst: number) => day - ((((((day + 3) % 7) + 7) % 7) - wkst + 7) % 7);

/** Which period of the rule's frequency `ms` falls in, and the first instant of period `n`. */
function periods(o: Options): { of: (ms: number) => number; start: (n: number) => number } {
  switch (o.freq) {
    case Frequency.YEARLY:
      return { of: yearOf, start: (n) => Date.UTC(n, 0, 1) };
    case Frequency.MONTHLY:
      return { of: monthOf, start: (n) => Date.UTC(Math.floor(n / 12), n % 12, 1) };
    case Frequency.WEEKLY:
      return { of: (ms) => weekStartOf(dayOf(ms), o.wkst) / 7, start: (n) => Math.round(n * 7) * DAY_MS };
    default:
      return { of: dayOf, start: (n) => n * DAY_MS };
  }
}

/**
 * A DTSTART no later than wall time `from` (whole seconds) from which rrule.js gives the rule's
 * occurrences from `from` on: in a period the original DTSTART's INTERVAL reaches (or at the
 * start of the next such period), never before the original DTSTART. BYSETPOS picks from a whole
 * period (rrule.js starts a week at DTSTART's day), so such a rule starts at its period's start.
 */
function rebase(o: Options, from: number): Date {
  const start = o.dtstart.getTime();
  if (from <= start) return o.dtstart;
  const unit = UNIT_MS[o.freq];
  if (unit) return new Date(start + Math.floor((from - start) / (unit * o.interval)) * unit * o.interval);
  const p = periods(o);
  const n = p.of(from) - p.of(start);
  const reached = Math.floor(n / o.interval) * o.interval;
  if (reached === n && !o.bysetpos?.length) return new Date(from);
  const period = reached === n ? reached : reached + o.interval;
  return new Date(Math.max(start, p.start(p.of(start) + period)));
}

/**
 * Steps rrule.js may take over `span` ms: one per period of the rule; for an hourly or minutely
 * rule, one per day that has no occurrence and one per occurrence (`wanted` of them).
 */
function stepsFor(o: Options, span: number, wanted: number): number {
  const days = Math.ceil(span / DAY_MS) + 2;
  const per: Partial<Record<number, number>> = {
    [Frequency.YEARLY]: 365,
    [Frequency.MONTHLY]: 28,
    [Frequency.WEEKLY]: 7,
    [Frequency.DAILY]: 1,
  };
  const length = per[o.freq];
  return length ? Math.ceil(days / length / o.interval) + 2 : 2 * days + wanted + 4;
}

/** Thrown from rrule.js's own loop once it has taken the steps it was allowed. */
const STEPS_SPENT = new Error('recurrence steps spent');

/**
 * Calls `each` with the rule's wall times from `from` to `to` in order, until it answers false,
 * or rrule.js has stepped past `to`. rrule.js reads its options' `freq` once a step (and at
 * most once more on a new month): reading it more often than allowed stops the expansion.
 */
function expand(o: Options, from: number, to: number, wanted: number, each: (wall: number) => boolean): void {
  const start = o.freq >= Frequency.DAILY ? firstDayPassing(o, from, to) : from;
  if (start === null) return;
  const dtstart = rebase(o, start);
  const allowed = 2 * stepsFor(o, to - dtstart.getTime(), wanted) + 4;
  let reads = 0;
  const options = { ...o, dtstart };
  Object.defineProperty(options, 'freq', {
    enumerable: true,
    get: () => {
      if (++reads > allowed) throw STEPS_SPENT;
      return o.freq;
    },
  });
  const rule = new RRule({ freq: o.freq }, true);
  rule.options = options;
  try {
    rule.between(new Date(start), new Date(to), true, (d) => each(d.getTime()));
  } catch (error) {
    if (error !== STEPS_SPENT) throw error;
  }
}

/**
 * For a daily, hourly or minutely rule, `from`, or the start of the first day after it that its
 * BYMONTH, BYMONTHDAY, BYDAY, BYYEARDAY and BYWEEKNO let through (null: none until `to`). Those
 * rules take a step (or more) a day in rrule.js; a yearly rule of the same days takes one a year.
 */
function firstDayPassing(o: Options, from: number, to: number): number | null {
  const day = Math.floor(from / DAY_MS) * DAY_MS;
  const days: Options = {
    ...o,
    freq: Frequency.YEARLY,
    interval: 1,
    dtstart: new Date(day),
    until: null,
    bysetpos: [],
    byhour: [0],
    byminute: [0],
    bysecond: [0],
  };
  let first: number | null = null;
  expand(days, day, to, 1, (wall) => {
    first = wall;
    return false;
  });
  return first === null ? null : Math.max(from, first);
}

/** The due times (instants, ms) of `rule` after `after` and at or before `end`: the first `limit`. */
export function rruleWithin(rule: Rrule, after: number, end: number, limit: number): number[] {
  const { zone } = rule;
  const instant = (wall: number) => (zone ? instantOf(zone, wall) : wall);
  const wall = (t: number) => (zone ? wallTime(zone, t) : t);
  const found: number[] = [];
  const keep = (t: number) => t > after && t <= end && t !== found.at(-1);
  const from = Math.floor(wall(after) / 1000) * 1000;
  // Instants grow with wall times (zone.ts), so the first ones after `after` come first.
  expand(rule.options, from, wall(end) + DAY_MS, limit + rule.exdates.size, (w) => {
    if (rule.exdates.has(w)) return true;
    const t = instant(w);
    if (t > end) return false;
    if (keep(t)) found.push(t);
    return found.length < limit;
  });
  const extra = rule.rdates.filter((w) => !rule.exdates.has(w)).map(instant);
  const all = [...found, ...extra.filter((t) => t > after && t <= end)].sort((a, b) => a - b);
  return all.filter((t, i) => all[i - 1] !== t).slice(0, limit);
}
