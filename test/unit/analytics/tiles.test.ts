/**
 * The units that tile a range (queries/analytics/analytics-range.ts): they cover it exactly, each
 * a whole unit of its grain, and few: the whole months, and at most 24 finer units at either end.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Grain, nextUnit, unitStart } from '../../../projections/analytics/grains.js';
import { resolveRange, type Tile, tilesOf } from '../../../queries/analytics/analytics-range.js';

const HOUR = 3_600_000;
const FROM = Date.parse('2024-01-01T00:00:00Z');
const summary = (tiles: Tile[]) => tiles.map((t) => `${t.grain} ${t.at.slice(0, 13)}`);
const count = (tiles: Tile[], grain: Grain) => tiles.filter((t) => t.grain === grain).length;

describe('the tiles of a range', () => {
  it('cover it exactly with whole units, and at most 24 finer than a month at either end', () => {
    const hours = fc.integer({ min: 0, max: 4 * 366 * 24 });
    fc.assert(
      fc.property(hours, fc.integer({ min: 1, max: 1098 * 24 }), (start, length) => {
        const [from, to] = [FROM + start * HOUR, FROM + (start + length) * HOUR];
        const tiles = tilesOf(from, to);
        let at = from;
        for (const { grain, at: iso } of tiles) {
          const ms = Date.parse(iso);
          expect(ms).toBe(at);
          expect(unitStart(ms, grain)).toBe(ms);
          at = nextUnit(ms, grain);
        }
        expect(at).toBe(to);
        expect(tiles.length - count(tiles, 'month')).toBeLessThanOrEqual(48);
      }),
      { seed: 34, numRuns: 2000 },
    );
  });

  it('take whole months, then weeks from Sunday, days, six hours and hours at the ends', () => {
    // Friday 2026-01-30 05:00 to Monday 2026-03-09 07:00.
    const tiles = tilesOf(Date.parse('2026-01-30T05:00:00Z'), Date.parse('2026-03-09T07:00:00Z'));
    expect(summary(tiles)).toEqual([
      'hour 2026-01-30T05',
      'six_hours 2026-01-30T06',
      'six_hours 2026-01-30T12',
      'six_hours 2026-01-30T18',
      'day 2026-01-31T00',
      'month 2026-02-01T00',
      'week 2026-03-01T00',
      'day 2026-03-08T00',
      'six_hours 2026-03-09T00',
      'hour 2026-03-09T06',
    ]);
  });

  it('are a week row for each whole week of a year by week', () => {
    const range = resolveRange(
      { start_date: '2025-01-01T00:00:00Z', end_date: '2026-01-01T00:00:00Z', group_by_period: 'week' },
      new Date(),
    );
    const tiles = range.periods!.map((p) => tilesOf(p.from, p.to));
    // 2025 starts on a Wednesday and ends on a Wednesday: 51 whole weeks between two cut ones.
    expect(tiles.filter((t) => t.length === 1 && t[0]!.grain === 'week')).toHaveLength(51);
    expect(tiles.flat().length).toBeLessThanOrEqual(51 + 2 * 6);
  });
});
