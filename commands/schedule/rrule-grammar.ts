/**
 * What a schedule's RFC 5545 recurrence may say: what rrule.js can expand within a bound on work
 * (rrule.ts), and nothing that fires more than once a minute.
 */
import { own, ownsKey } from '../../src/own-keys.js';
import rrulePackage from 'rrule';
import { isTimeZone } from './zone.js';

const { Frequency } = rrulePackage;
type Options = InstanceType<typeof rrulePackage.RRule>['options'];

const MAX_RRULE_LENGTH = 2000;
/** EXDATE and RDATE values, together. */
const MAX_DATES = 100;
const MAX_INTERVAL = 10_000;

const LINES = ['DTSTART', 'RRULE', 'EXDATE', 'RDATE'];
const ONCE_A_MINUTE = 'a schedule falls due at most once a minute';

/** The parts an RRULE may have, and the range of each numeric one. */
const PARTS: Record<string, [number, number] | null> = {
  FREQ: null,
  INTERVAL: [1, MAX_INTERVAL],
  UNTIL: null,
  WKST: null,
  BYDAY: null,
  BYSETPOS: [-366, 366],
  BYMONTH: [1, 12],
  BYMONTHDAY: [-31, 31],
  BYYEARDAY: [-366, 366],
  BYWEEKNO: [-53, 53],
  BYHOUR: [0, 23],
  BYMINUTE: [0, 59],
  BYSECOND: [0, 59],
};

function partProblem(key: string, value: string): string | null {
  if (key === 'COUNT')
    return 'COUNT is not accepted: give UNTIL (due times are reckoned from now, not counted from DTSTART)';
  if (!ownsKey(PARTS, key)) return `${key} is not accepted in a schedule's RRULE`;
  if (key === 'FREQ' && value.toUpperCase() === 'SECONDLY') return `FREQ=SECONDLY is not accepted: ${ONCE_A_MINUTE}`;
  if (key === 'BYSECOND' && value.includes(',')) return `BYSECOND takes one value: ${ONCE_A_MINUTE}`;
  const range = own(PARTS, key);
  if (!range) return null;
  const [min, max] = range;
  const fits = (v: string) => /^[+-]?\d{1,5}$/.test(v) && +v >= min && +v <= max && (min >= 0 || +v !== 0);
  return value.split(',').every(fits) ? null : `${key} takes ${min} to ${max}${min < 0 ? ', not 0' : ''}`;
}

/** Why the lines of a recurrence text are refused, or null: before rrule.js reads them. */
export function rruleGrammarProblem(text: string): string | null {
  if (text.length > MAX_RRULE_LENGTH) return `at most ${MAX_RRULE_LENGTH} characters`;
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const names = lines.map((l) => /^([A-Za-z-]+)[;:]/.exec(l)?.[1]?.toUpperCase() ?? l.slice(0, 20));
  const other = names.find((n) => !LINES.includes(n));
  if (other !== undefined) return `${other}: only DTSTART, RRULE, EXDATE and RDATE lines are accepted`;
  if (names.filter((n) => n === 'DTSTART').length !== 1 || names.filter((n) => n === 'RRULE').length !== 1)
    return 'give one DTSTART (with TZID= for a local time), then one RRULE:';
  const zone = /^DTSTART;TZID=([^:;]+)[:;]/im.exec(text)?.[1];
  if (zone !== undefined && !isTimeZone(zone)) return `unknown time zone ${zone}`;
  const dates = lines.filter((_, i) => names[i] === 'EXDATE' || names[i] === 'RDATE');
  if (dates.reduce((n, l) => n + l.split(',').length, 0) > MAX_DATES)
    return `at most ${MAX_DATES} EXDATE and RDATE values in all`;
  const rule = lines[names.indexOf('RRULE')]!;
  if (!/^RRULE:/i.test(rule)) return 'RRULE takes no parameters: RRULE:FREQ=…';
  for (const part of rule.slice('RRULE:'.length).split(';')) {
    const [key = '', value = ''] = part.split('=');
    const problem = partProblem(key.toUpperCase(), value);
    if (problem) return problem;
  }
  return null;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
const reaches = (values: number[] | null, from: number, step: number) =>
  !values?.length || values.some((v) => (v - from) % step === 0);

/**
 * Why an hourly or minutely rule is refused, or null. rrule.js steps such a rule until BYHOUR and
 * BYMINUTE match, and would step forever if INTERVAL never reaches them; with BYHOUR it skips
 * whole hours, which keeps the minutes right only when INTERVAL divides 60.
 */
export function stepProblem(o: Options): string | null {
  if (o.freq !== Frequency.HOURLY && o.freq !== Frequency.MINUTELY) return null;
  if (o.bysetpos?.length) return 'BYSETPOS takes FREQ=DAILY or longer';
  if (o.freq === Frequency.HOURLY)
    return reaches(o.byhour, o.dtstart.getUTCHours(), gcd(o.interval, 24))
      ? null
      : 'BYHOUR names no hour that INTERVAL reaches from DTSTART';
  if (o.byhour?.length && 60 % o.interval !== 0) return 'with BYHOUR, FREQ=MINUTELY takes an INTERVAL that divides 60';
  return reaches(o.byminute, o.dtstart.getUTCMinutes(), gcd(o.interval, 60))
    ? null
    : 'BYMINUTE names no minute that INTERVAL reaches from DTSTART';
}
