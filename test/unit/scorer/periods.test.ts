/** UTC periods: weeks from Sunday, months of their own length, and ranges tiled with whole periods. */
import { describe, expect, it } from 'vitest';
import { binsOf, nextPeriod, periodStart, tiles } from '../../../projections/scorer/periods.js';

const d = (iso: string) => new Date(iso);
const iso = (x: Date) => x.toISOString();

describe('periods', () => {
  it('starts days, weeks (Sunday) and months in UTC', () => {
    expect(iso(periodStart(d('2026-05-01T13:14:15.500Z'), 'minute'))).toBe('2026-05-01T13:14:00.000Z');
    expect(iso(periodStart(d('2026-05-01T13:14:15Z'), 'week'))).toBe('2026-04-26T00:00:00.000Z');
    expect(iso(periodStart(d('2026-05-03T00:00:00Z'), 'week'))).toBe('2026-05-03T00:00:00.000Z');
    expect(iso(periodStart(d('2026-02-28T23:59:59Z'), 'month'))).toBe('2026-02-01T00:00:00.000Z');
    expect(binsOf(d('2026-01-30T12:00:00Z'), d('2026-03-01T00:00:00Z'), 'month').map(iso)).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-02-01T00:00:00.000Z',
    ]);
    expect(binsOf(d('2025-01-01T00:00:00Z'), d('2026-01-02T00:00:00Z'), 'day', 365)).toHaveLength(366);
  });

  it('tiles a range with whole periods, the largest that fit, so a month is one row and its edges a few', () => {
    const cut = tiles(d('2026-01-31T22:58:00Z'), d('2026-03-02T01:02:00Z'), 'month');
    const count = (grain: string) => cut.filter((t) => t.grain === grain).length;
    expect(count('month')).toBe(1);
    expect(count('day')).toBe(1);
    expect(count('hour')).toBe(2);
    expect(count('minute')).toBe(2 + 2);
    // Contiguous, in order, covering exactly the range.
    expect(iso(cut[0]!.start)).toBe('2026-01-31T22:58:00.000Z');
    for (const [i, t] of cut.entries()) {
      const end = nextPeriod(t.start, t.grain);
      expect(end.getTime()).toBe(cut[i + 1]?.start.getTime() ?? Date.parse('2026-03-02T01:02:00Z'));
    }
    expect(tiles(d('2026-05-03T00:00:00Z'), d('2026-05-10T00:00:00Z'), 'week')).toEqual([
      { grain: 'week', start: d('2026-05-03T00:00:00Z') },
    ]);
  });
});
