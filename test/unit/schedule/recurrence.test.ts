import { describe, expect, it } from 'vitest';
import { COUNTED_SKIPS, dueAt } from '../../../commands/schedule/due.js';
import { cronProblem, dueTimes, recurrenceProblem, rruleProblem } from '../../../commands/schedule/recurrence.js';
import { instantOf } from '../../../commands/schedule/zone.js';

const at = (iso: string) => new Date(iso);
const next = (recurrence: Parameters<typeof dueTimes>[0], after: string, anchor = '2026-01-01T00:00:00Z') =>
  dueTimes(recurrence, at(anchor)).nextAfter(at(after))?.toISOString();

describe('cron lines (robfig/cron grammar, UTC)', () => {
  it.each([
    '0 9 * * 1-5',
    '*/15 * * * *',
    '0 0 1,15 * ?',
    '30 6 * JAN-MAR MON',
    '@daily',
    '@midnight',
    '@every 90m',
    '@every 1h30m',
    '@every 1s',
  ])('accepts %s', (line) => expect(cronProblem(line)).toBeNull());

  it.each([
    ['CRON_TZ=Europe/Berlin 0 9 * * *', /UTC/],
    ['TZ=UTC 0 9 * * *', /UTC/],
    ['0 0 9 * * *', /5 fields/],
    ['0 9 * *', /5 fields/],
    ['60 * * * *', /minute/],
    ['0 24 * * *', /hour/],
    ['0 0 L * *', /day of month/],
    ['0 0 * * 7', /day of week/],
    ['0 0 * 13 *', /month/],
    ['0 5-1 * * *', /backwards/],
    ['@every 0s', /@every/],
    ['@every 1500ms', /@every/],
    ['@fortnightly', /unknown descriptor/],
  ])('refuses %s', (line, reason) => expect(cronProblem(line)).toMatch(reason));

  it('fires at the same UTC time every day', () => {
    expect(next({ cron: '0 9 * * *' }, '2026-03-28T10:00:00Z')).toBe('2026-03-29T09:00:00.000Z');
    expect(next({ cron: '0 9 * * *' }, '2026-03-29T10:00:00Z')).toBe('2026-03-30T09:00:00.000Z');
  });

  it('counts @every from its anchor, not from the moment asked', () => {
    expect(next({ cron: '@every 90m' }, '2026-01-01T02:00:00Z')).toBe('2026-01-01T03:00:00.000Z');
    expect(next({ cron: '@every 90m' }, '2026-01-01T03:00:00Z')).toBe('2026-01-01T04:30:00.000Z');
  });
});

describe('RRULE recurrences', () => {
  const weekdaysBerlin = 'DTSTART;TZID=Europe/Berlin:20260301T090000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR';

  it('keeps 09:00 Europe/Berlin across the change to summer time', () => {
    // Summer time starts on Sunday 29 March 2026: 09:00 is 08:00 UTC before, 07:00 UTC after.
    expect(next({ rrule: weekdaysBerlin }, '2026-03-26T12:00:00Z')).toBe('2026-03-27T08:00:00.000Z');
    expect(next({ rrule: weekdaysBerlin }, '2026-03-27T12:00:00Z')).toBe('2026-03-30T07:00:00.000Z');
  });

  it('says what cron cannot: every other Tuesday, the last weekday of the month', () => {
    const otherTuesday = 'DTSTART:20260106T100000Z\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU';
    expect(next({ rrule: otherTuesday }, '2026-01-06T10:00:00Z')).toBe('2026-01-20T10:00:00.000Z');
    const lastWeekday = 'DTSTART:20260101T170000Z\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1';
    expect(next({ rrule: lastWeekday }, '2026-01-01T18:00:00Z')).toBe('2026-01-30T17:00:00.000Z');
    expect(next({ rrule: lastWeekday }, '2026-01-30T18:00:00Z')).toBe('2026-02-27T17:00:00.000Z');
  });

  it('leaves out EXDATE times and adds RDATE ones', () => {
    const text = `${weekdaysBerlin}\nEXDATE;TZID=Europe/Berlin:20260327T090000\nRDATE;TZID=Europe/Berlin:20260328T120000`;
    expect(next({ rrule: text }, '2026-03-26T12:00:00Z')).toBe('2026-03-28T11:00:00.000Z');
    expect(next({ rrule: text }, '2026-03-28T11:00:00Z')).toBe('2026-03-30T07:00:00.000Z');
  });

  it('reckons a rule whose DTSTART is decades back from the moment asked, not from DTSTART', () => {
    expect(next({ rrule: 'DTSTART:19900101T000000Z\nRRULE:FREQ=HOURLY' }, '2026-03-25T12:30:00Z')).toBe(
      '2026-03-25T13:00:00.000Z',
    );
    const everyThirdDay = 'DTSTART:19900101T090000Z\nRRULE:FREQ=DAILY;INTERVAL=3';
    // 13,232 days from 1 January 1990 to 25 March 2026: 13,233 is the next multiple of 3.
    expect(next({ rrule: everyThirdDay }, '2026-03-25T12:00:00Z')).toBe('2026-03-26T09:00:00.000Z');
  });

  const tooMany = `DTSTART:20260101T090000Z\nRRULE:FREQ=DAILY\nEXDATE:${Array(101).fill('20260102T090000Z').join(',')}`;
  it.each([
    ['RRULE:FREQ=DAILY', /DTSTART/],
    ['DTSTART;TZID=Mars/Olympus:20260101T090000\nRRULE:FREQ=DAILY', /time zone Mars\/Olympus/],
    ['DTSTART:20260101T090000Z\nRRULE:FREQ=SOMETIMES', /RFC 5545/],
    ['DTSTART:20260101T090000Z\nRRULE:FREQ=SECONDLY', /once a minute/],
    ['DTSTART:20260101T090000Z\nRRULE:FREQ=MINUTELY;BYSECOND=0,30', /once a minute/],
    ['DTSTART:20260101T090000Z\nRRULE:FREQ=DAILY;COUNT=3', /COUNT.*UNTIL/],
    ['DTSTART:20260101T090000Z\nRRULE:FREQ=DAILY\nEXRULE:FREQ=WEEKLY', /EXRULE: only DTSTART, RRULE/],
    ['DTSTART:20260101T090000Z\nRRULE:FREQ=DAILY\nRRULE:FREQ=WEEKLY', /one RRULE/],
    ['DTSTART:20260101T090000Z\nRRULE:FREQ=DAILY;DTSTART=19900101T000000Z', /DTSTART is not accepted/],
    ['DTSTART:20260101T090000Z\nRRULE:FREQ=DAILY;INTERVAL=20000', /INTERVAL takes 1 to 10000/],
    ['DTSTART:20260101T090000Z\nRRULE:FREQ=DAILY;BYHOUR=24', /BYHOUR takes 0 to 23/],
    ['DTSTART:20260101T090000Z\nRRULE:FREQ=HOURLY;BYSETPOS=1', /BYSETPOS/],
    // rrule.js would step these forever: every other hour from 00:00 never reaches 01:00.
    ['DTSTART:20260101T000000Z\nRRULE:FREQ=HOURLY;INTERVAL=2;BYHOUR=1', /BYHOUR names no hour/],
    ['DTSTART:20260101T000000Z\nRRULE:FREQ=MINUTELY;INTERVAL=10;BYMINUTE=5', /BYMINUTE names no minute/],
    ['DTSTART:20260101T000000Z\nRRULE:FREQ=MINUTELY;INTERVAL=90;BYHOUR=1', /divides 60/],
    [tooMany, /at most 100 EXDATE and RDATE/],
  ])('refuses %s', (text, reason) => expect(rruleProblem(text)).toMatch(reason));
});

describe('what never falls due, or not in the next five years', () => {
  const now = at('2026-03-25T12:00:00Z');
  // Without the bound on work, rrule.js looks for these until the year 9999: seconds to hours each.
  it.each([
    { cron: '0 0 30 2 *' },
    { cron: '0 0 31 4 *' },
    { rrule: 'DTSTART:19900101T000000Z\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30' },
    { rrule: 'DTSTART:19900101T000000Z\nRRULE:FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=30' },
    { rrule: 'DTSTART:19900101T000000Z\nRRULE:FREQ=HOURLY;BYMONTH=4;BYMONTHDAY=31' },
    { rrule: 'DTSTART;TZID=Europe/Berlin:19900101T000000\nRRULE:FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31' },
    // 1 January 1990 was a Monday: every seventh day is one too.
    { rrule: 'DTSTART:19900101T000000Z\nRRULE:FREQ=DAILY;INTERVAL=7;BYDAY=TU' },
    { rrule: 'DTSTART:19900101T000000Z\nRRULE:FREQ=MONTHLY;BYMONTHDAY=31;BYMONTH=6' },
    // The next 29 February that is a Monday is in 2044.
    { rrule: 'DTSTART:19900101T000000Z\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO' },
    { rrule: 'DTSTART:20200101T000000Z\nRRULE:FREQ=DAILY;UNTIL=20250101T000000Z' },
    { rrule: 'DTSTART:20320101T000000Z\nRRULE:FREQ=DAILY' },
  ])('refuses %j', (recurrence) => {
    expect(recurrenceProblem(recurrence, now)).toMatch(/falls due at no time in the next 5 years/);
    expect(dueTimes(recurrence, now).nextAfter(now)).toBeNull();
  });

  it('accepts what falls due within five years, however rarely', () => {
    expect(recurrenceProblem({ cron: '0 0 29 2 *' }, now)).toBeNull();
    const leapMonday = 'DTSTART:19900101T000000Z\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO';
    expect(next({ rrule: leapMonday }, '2040-01-01T00:00:00Z')).toBe('2044-02-29T00:00:00.000Z');
  });
});

describe('wall times of a time zone', () => {
  const berlin = (wall: string) => new Date(instantOf('Europe/Berlin', Date.parse(`${wall}Z`))).toISOString();
  it('reads a wall time the clocks skip as the moment they skip it, and one they repeat as the first', () => {
    expect(berlin('2026-03-29T01:59:00')).toBe('2026-03-29T00:59:00.000Z');
    expect(berlin('2026-03-29T02:30:00')).toBe('2026-03-29T01:00:00.000Z');
    expect(berlin('2026-03-29T03:00:00')).toBe('2026-03-29T01:00:00.000Z');
    expect(berlin('2026-10-25T02:30:00')).toBe('2026-10-25T00:30:00.000Z');
    expect(berlin('2026-10-25T03:00:00')).toBe('2026-10-25T02:00:00.000Z');
  });
});

describe('what is due', () => {
  const hourly = dueTimes({ cron: '0 * * * *' }, at('2026-01-01T00:00:00Z'));

  it('is nothing before the next due time', () => {
    expect(dueAt(hourly, at('2026-01-01T10:00:00Z'), at('2026-01-01T10:59:59Z'))).toBeNull();
  });

  it('after downtime, is the most recent due time, with the missed ones recorded', () => {
    const due = dueAt(hourly, at('2026-01-01T10:00:00Z'), at('2026-01-01T13:30:00Z'))!;
    expect(due.due.toISOString()).toBe('2026-01-01T13:00:00.000Z');
    expect(due.skipped.map((d) => d.toISOString())).toEqual(['2026-01-01T11:00:00.000Z', '2026-01-01T12:00:00.000Z']);
    expect(due.skipped_count).toBe(2);
  });

  it('names and counts at most 100 skipped times', () => {
    const due = dueAt(hourly, at('2026-01-01T00:00:00Z'), at('2026-01-11T00:00:00Z'))!;
    expect(due.due.toISOString()).toBe('2026-01-11T00:00:00.000Z');
    expect(due.skipped).toHaveLength(100);
    expect(due.skipped[0]!.toISOString()).toBe('2026-01-01T01:00:00.000Z');
    expect(due.skipped_count).toBe(100);
  });

  it.each([
    { cron: '* * * * *' },
    { rrule: 'DTSTART;TZID=Europe/Berlin:20200101T000000\nRRULE:FREQ=MINUTELY' },
    { cron: '@every 1s' },
  ])('far behind (%j, a year of downtime), counts up to its cap and fires the latest due time', (recurrence) => {
    const due = dueAt(
      dueTimes(recurrence, at('2025-01-01T00:00:00Z')),
      at('2025-03-25T12:00:00Z'),
      at('2026-03-25T12:34:56Z'),
    )!;
    const latest =
      'cron' in recurrence && recurrence.cron === '@every 1s' ? '2026-03-25T12:34:56.000Z' : '2026-03-25T12:34:00.000Z';
    expect(due.due.toISOString()).toBe(latest);
    expect(due.skipped).toHaveLength(100);
    expect(due.skipped_count).toBe(COUNTED_SKIPS);
  });
});
