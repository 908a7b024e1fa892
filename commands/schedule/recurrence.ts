/**
 * When a schedule is due: a cron line in the grammar of robfig/cron (5 fields in UTC, or a
 * descriptor such as `@daily` or `@every 90m`), or an RFC 5545 recurrence (`DTSTART;TZID=…` plus
 * `RRULE:`), which keeps local times across daylight saving and says what cron cannot. Pure: the
 * time it reckons from always comes in.
 */
import { CronExpressionParser } from 'cron-parser';
import rrulePackage from 'rrule';
import { own, ownsKey } from '../../src/own-keys.js';

const { rrulestr } = rrulePackage;

export type Recurrence = { cron: string } | { rrule: string };

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

/** Each field's range and names; `?` is robfig's "no specific value" for the two day fields. */
const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31, question: true },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day of week', min: 0, max: 6, names: WEEKDAYS, question: true },
] as const;

type Field = (typeof FIELDS)[number];

function fieldValue(token: string, field: Field): number | null {
  const names: readonly string[] | undefined = 'names' in field ? field.names : undefined;
  const named = names?.indexOf(token.toUpperCase()) ?? -1;
  if (named >= 0) return named + field.min;
  if (!/^\d{1,2}$/.test(token)) return null;
  const n = Number(token);
  return n >= field.min && n <= field.max ? n : null;
}

function fieldProblem(text: string, field: Field): string | null {
  for (const part of text.split(',')) {
    const [range, step, ...rest] = part.split('/');
    if (rest.length || range === undefined) return `${field.name}: ${part} is not a value, range or step`;
    if (step !== undefined && !/^[1-9]\d{0,1}$/.test(step)) return `${field.name}: the step of ${part} is not 1-99`;
    if (range === '*' || (range === '?' && 'question' in field)) continue;
    const ends = range.split('-');
    if (ends.length > 2 || ends.some((e) => fieldValue(e, field) === null))
      return `${field.name}: ${part} is outside ${field.min}-${field.max}`;
    if (ends.length === 2 && fieldValue(ends[0]!, field)! > fieldValue(ends[1]!, field)!)
      return `${field.name}: the range ${range} runs backwards`;
  }
  return null;
}

/** `@every <duration>` in Go's duration syntax, in whole seconds (at least one). */
function everySeconds(line: string): number | null {
  const m = /^@every ((?:\d+(?:\.\d+)?(?:h|m|s|ms|us|µs|ns))+)$/.exec(line);
  if (!m) return null;
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, µs: 1e-6, ns: 1e-9 };
  let seconds = 0;
  for (const [, n, u] of m[1]!.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) seconds += Number(n) * own(unit, u!)!;
  return Number.isInteger(seconds) && seconds >= 1 ? seconds : null;
}

/** Why a cron line is refused, or null when it is one. */
export function cronProblem(line: string): string | null {
  if (/^\s*(CRON_TZ|TZ)=/.test(line)) return 'schedules run in UTC; CRON_TZ= and TZ= are not accepted';
  if (line.length > 200) return 'at most 200 characters';
  if (line.startsWith('@every'))
    return everySeconds(line) === null ? '@every takes a duration of whole seconds, such as 90m or 1h30m' : null;
  if (line.startsWith('@')) return ownsKey(DESCRIPTORS, line) ? null : `an unknown descriptor ${line}`;
  const fields = line.trim().split(/\s+/);
  if (fields.length !== 5) return 'a cron expression has 5 fields (minute hour day-of-month month day-of-week), in UTC';
  for (const [i, field] of FIELDS.entries()) {
    const problem = fieldProblem(fields[i]!, field);
    if (problem) return problem;
  }
  return null;
}

const MAX_RRULE_LENGTH = 2000;

/** The rule set of a recurrence text, or the reason it is refused. */
function parseRrule(text: string): { set: ReturnType<typeof rrulestr> } | { problem: string } {
  if (text.length > MAX_RRULE_LENGTH) return { problem: `at most ${MAX_RRULE_LENGTH} characters` };
  if (!/^DTSTART[;:]/m.test(text)) return { problem: 'give DTSTART (with TZID= for a local time), then RRULE:' };
  const zone = /^DTSTART;TZID=([^:;]+)[:;]/m.exec(text)?.[1];
  if (zone !== undefined && !isTimeZone(zone)) return { problem: `unknown time zone ${zone}` };
  try {
    return { set: rrulestr(text, { forceset: true }) };
  } catch (error) {
    return { problem: `not an RFC 5545 recurrence: ${(error as Error).message}` };
  }
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Why a recurrence text is refused, or null when it is one. */
export function rruleProblem(text: string): string | null {
  const parsed = parseRrule(text);
  return 'problem' in parsed ? parsed.problem : null;
}

/**
 * The due times of a recurrence. `anchor` is where `@every` counts its intervals from (the time
 * the recurrence was set: deterministic, unlike robfig's "since the process started").
 */
export interface DueTimes {
  /** The first due time strictly after `after`, or null when there is none. */
  nextAfter(after: Date): Date | null;
}

export function dueTimes(recurrence: Recurrence, anchor: Date): DueTimes {
  if ('rrule' in recurrence) {
    const parsed = parseRrule(recurrence.rrule);
    if ('problem' in parsed) throw new Error(parsed.problem);
    return { nextAfter: (after) => parsed.set.after(after, false) };
  }
  const every = everySeconds(recurrence.cron);
  if (every !== null) {
    const step = every * 1000;
    return {
      nextAfter: (after) => {
        const k = Math.floor((after.getTime() - anchor.getTime()) / step) + 1;
        return new Date(anchor.getTime() + Math.max(1, k) * step);
      },
    };
  }
  const line = own(DESCRIPTORS, recurrence.cron) ?? recurrence.cron;
  return {
    nextAfter: (after) => CronExpressionParser.parse(line, { currentDate: after, tz: 'UTC' }).next().toDate(),
  };
}

/** At most this many skipped due times are named; more are counted. */
const NAMED_SKIPS = 100;
const COUNTED_SKIPS = 10_000;

export interface Due {
  /** The most recent due time at or before now: the one to fire. */
  due: Date;
  /** The due times before it that were missed (downtime): not fired, recorded. */
  skipped: Date[];
  /** How many were skipped, counted up to 10,000. */
  skipped_count: number;
}

/** What is due at `now` for a schedule that last fired (or was set) at `since`; null if nothing. */
export function dueAt(times: DueTimes, since: Date, now: Date): Due | null {
  let due = times.nextAfter(since);
  if (!due || due > now) return null;
  const skipped: Date[] = [];
  let count = 0;
  for (let next = times.nextAfter(due); next && next <= now; next = times.nextAfter(due)) {
    if (skipped.length < NAMED_SKIPS) skipped.push(due);
    count++;
    due = next;
    if (count >= COUNTED_SKIPS) {
      // Far behind: jump to the latest due time without counting the rest.
      for (let n = times.nextAfter(due); n && n <= now; n = times.nextAfter(due)) due = n;
      break;
    }
  }
  return { due, skipped, skipped_count: count };
}
