import { describe, expect, it } from 'vitest';
import { cronProblem, dueAt, dueTimes, rruleProblem } from '../../commands/schedule/recurrence.js';

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

  it.each([
    ['RRULE:FREQ=DAILY', /DTSTART/],
    ['DTSTART;TZID=Mars/Olympus:20260101T090000\nRRULE:FREQ=DAILY', /time zone Mars\/Olympus/],
    ['DTSTART:20260101T090000Z\nRRULE:FREQ=SOMETIMES', /RFC 5545/],
  ])('refuses %s', (text, reason) => expect(rruleProblem(text)).toMatch(reason));
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

  it('names at most 100 skipped times and counts on', () => {
    const due = dueAt(hourly, at('2026-01-01T00:00:00Z'), at('2026-01-11T00:00:00Z'))!;
    expect(due.due.toISOString()).toBe('2026-01-11T00:00:00.000Z');
    expect(due.skipped).toHaveLength(100);
    expect(due.skipped_count).toBe(239);
  });
});
