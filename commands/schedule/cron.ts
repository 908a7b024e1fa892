/**
 * Cron lines in the grammar of robfig/cron: 5 fields in UTC, or a descriptor such as `@daily` or
 * `@every 90m`. cron-parser finds the due times (each one in at most its 10,000 steps).
 */
import { own, ownsKey } from '../../src/own-keys.js';
import { CronExpressionParser } from 'cron-parser';

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
export function everySeconds(line: string): number | null {
  const m = /^@every ((?:\d+(?:\.\d+)?(?:h|m|s|ms|us|µs|ns))+)$/.exec(line);
  if (!m) return null;
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, µs: 1e-6, ns: 1e-9 };
  let seconds = 0;
  for (const [, n, u] of m[1]!.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) seconds += Number(n) * own(unit, u!)!;
  return Number.isInteger(seconds) && seconds >= 1 ? seconds : null;
}

/** Why a cron line is refused, or null when it is one (whether it ever falls due is not asked here). */
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

/** `@every`'s due times after `after`: whole intervals counted from `anchor`. */
export function everyWithin(seconds: number, anchor: Date, after: Date, end: Date, limit: number): Date[] {
  const step = seconds * 1000;
  const first = Math.max(1, Math.floor((after.getTime() - anchor.getTime()) / step) + 1);
  const out: Date[] = [];
  for (let k = first; out.length < limit; k++) {
    const due = new Date(anchor.getTime() + k * step);
    if (due > end) break;
    out.push(due);
  }
  return out;
}

/** A cron line's due times after `after` and at or before `end`: the first `limit`. */
export function cronWithin(line: string, after: Date, end: Date, limit: number): Date[] {
  const out: Date[] = [];
  try {
    // cron-parser refuses a day that no month named has (`0 0 30 2 *`), and gives up after 10,000 steps.
    const times = CronExpressionParser.parse(own(DESCRIPTORS, line) ?? line, { currentDate: after, tz: 'UTC' });
    while (out.length < limit) {
      const due = times.next().toDate();
      if (due > end) break;
      out.push(due);
    }
  } catch {
    // No (more) due times.
  }
  return out;
}
