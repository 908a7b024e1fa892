/**
 * The bounded expansion (a DTSTART moved to the moment asked about, a five-year horizon, rrule.js
 * stopped after the steps that takes) gives what plain rrule.js gives from the original DTSTART,
 * on rules whose plain expansion is cheap (a DTSTART not long before the moment asked about).
 * With a TZID, due times within 15 hours of a change of offset are not compared: rrule.js turns a
 * wall time into an instant with the offset in force at the instant that reads like the wall time
 * in UTC, up to 14 hours away from the right one (zone.ts uses the right one).
 * Deterministic: a fixed seed (RRULE_SEED overrides it).
 */
import fc from 'fast-check';
import rrulePackage from 'rrule';
import { describe, expect, it } from 'vitest';
import { dueTimes } from '../../../commands/schedule/recurrence.js';
import { wallTime } from '../../../commands/schedule/zone.js';

const { rrulestr } = rrulePackage;

const FREQS = ['YEARLY', 'MONTHLY', 'WEEKLY', 'DAILY', 'HOURLY', 'MINUTELY'] as const;
const DAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'America/Santiago', 'Asia/Kolkata'];
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A BY list, in order: rrule.js emits a day's times in the order their lists give (rrule.ts sorts them). */
const list = <T extends number | string>(values: fc.Arbitrary<T>, max: number) =>
  fc.option(
    fc.uniqueArray(values, { minLength: 1, maxLength: max }).map((l) => l.sort((a, b) => (a < b ? -1 : 1))),
    { nil: undefined },
  );

/** A rule of the accepted grammar whose every month has occurrences (no 30 February). */
const rule = fc
  .record({
    freq: fc.constantFrom(...FREQS),
    interval: fc.integer({ min: 1, max: 3 }),
    wkst: fc.constantFrom(...DAYS),
    bymonth: list(fc.integer({ min: 1, max: 12 }), 3),
    bymonthday: list(fc.oneof(fc.integer({ min: 1, max: 28 }), fc.integer({ min: -28, max: -1 })), 3),
    byday: list(fc.constantFrom(...DAYS), 3),
    nth: fc.constantFrom('', '1', '-1', '2'),
    byhour: list(fc.integer({ min: 0, max: 23 }), 3),
    byminute: list(fc.integer({ min: 0, max: 59 }), 3),
    bysetpos: fc.option(fc.constantFrom(1, -1), { nil: undefined }),
  })
  .map((r) => {
    const subDaily = r.freq === 'HOURLY' || r.freq === 'MINUTELY';
    const nth = r.freq === 'MONTHLY' || r.freq === 'YEARLY' ? r.nth : '';
    // A monthly rule every other month may never reach the months BYMONTH names.
    const interval = r.freq === 'MONTHLY' && r.bymonth ? 1 : r.interval;
    const parts = [`FREQ=${r.freq}`, `INTERVAL=${interval}`, `WKST=${r.wkst}`];
    if (r.bymonth) parts.push(`BYMONTH=${r.bymonth.join(',')}`);
    if (r.bymonthday && !nth) parts.push(`BYMONTHDAY=${r.bymonthday.join(',')}`);
    if (r.byday) parts.push(`BYDAY=${r.byday.map((d) => nth + d).join(',')}`);
    // Hourly rules take BYHOUR only when INTERVAL reaches it (grammar): every hour does. Minutely
    // ones with BYHOUR are expanded as the daily rule of the same times (rrule.ts), which rrule.js
    // steps wrongly across the days it leaves out.
    if (r.byhour && r.freq !== 'MINUTELY' && (r.freq !== 'HOURLY' || interval === 1))
      parts.push(`BYHOUR=${r.byhour.join(',')}`);
    if (r.byminute && (r.freq !== 'MINUTELY' || interval === 1)) parts.push(`BYMINUTE=${r.byminute.join(',')}`);
    if (r.bysetpos && !subDaily) parts.push(`BYSETPOS=${r.bysetpos}`);
    return { text: parts.join(';'), subDaily };
  });

const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:Z]|\.\d+/g, '');
const SEED = Number(process.env.RRULE_SEED ?? 30_2026);
const NOW = Date.parse('2026-03-25T12:00:00Z');

/** A due time plain rrule.js found, if within the five years the bounded expansion looks ahead. */
const within5Years = (plain: Date | null, asked: number) => {
  const horizon = new Date(asked);
  horizon.setUTCFullYear(horizon.getUTCFullYear() + 5);
  return plain && plain <= horizon ? plain.toISOString() : null;
};

/** Whether the offset of `zone` changes within 15 hours of `instant`. */
const nearChange = (zone: string, instant: number) =>
  [-15 * HOUR, 15 * HOUR].some(
    (d) => wallTime(zone, instant + d) - (instant + d) !== wallTime(zone, instant) - instant,
  );

describe('the bounded expansion of an RRULE', () => {
  it('gives the next due time plain rrule.js gives, in UTC', () => {
    fc.assert(
      fc.property(rule, fc.integer({ min: 0, max: 2 * 365 }), fc.integer({ min: 0, max: DAY }), (r, days, ms) => {
        const start = NOW - (r.subDaily ? ms % (6 * HOUR) : days * DAY + ms);
        const text = `DTSTART:${stamp(Math.floor(start / 1000) * 1000)}Z\nRRULE:${r.text}`;
        const plain = rrulestr(text).after(new Date(NOW));
        const bounded = dueTimes({ rrule: text }, new Date(NOW)).nextAfter(new Date(NOW));
        expect(bounded?.toISOString() ?? null, text).toBe(within5Years(plain, NOW));
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('lists the due times plain rrule.js lists, in UTC', () => {
    fc.assert(
      fc.property(rule, fc.integer({ min: 0, max: 400 }), (r, days) => {
        const start = NOW - (r.subDaily ? 0 : days * DAY) - 7 * HOUR;
        const text = `DTSTART:${stamp(start)}Z\nRRULE:${r.text}`;
        const end = new Date(NOW + 60 * DAY);
        const plain = rrulestr(text).between(new Date(NOW), end, false, (_, i) => i < 10);
        const bounded = dueTimes({ rrule: text }, new Date(NOW)).within(new Date(NOW), end, 10);
        expect(
          bounded.map((d) => d.toISOString()),
          text,
        ).toEqual(plain.map((d) => d.toISOString()));
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('gives the next due time plain rrule.js gives, in time zones with daylight saving', () => {
    fc.assert(
      fc.property(
        rule,
        fc.constantFrom(...ZONES),
        fc.integer({ min: 0, max: 365 * DAY }),
        fc.integer({ min: 0, max: 20 * DAY }),
        (r, zone, later, back) => {
          const asked = NOW + later;
          const start = asked - (r.subDaily ? back % (2 * HOUR) : back);
          const text = `DTSTART;TZID=${zone}:${stamp(Math.floor(wallTime(zone, start) / 1000) * 1000)}\nRRULE:${r.text}`;
          const plain = rrulestr(text).after(new Date(asked));
          const bounded = dueTimes({ rrule: text }, new Date(asked)).nextAfter(new Date(asked));
          fc.pre(!plain || !nearChange(zone, plain.getTime()));
          fc.pre(!bounded || !nearChange(zone, bounded.getTime()));
          expect(bounded?.toISOString() ?? null, text).toBe(within5Years(plain, asked));
        },
      ),
      { seed: SEED, numRuns: 150 },
    );
  });
});
