import { describe, expect, it } from 'vitest';
import { timeOrderedId } from '../../src/ids.js';

describe('timeOrderedId', () => {
  it('makes distinct version-7 UUIDs that sort by the millisecond they were made in', async () => {
    const first = Array.from({ length: 1000 }, timeOrderedId);
    await new Promise((resolve) => setTimeout(resolve, 2));
    const later = Array.from({ length: 1000 }, timeOrderedId);
    const all = [...first, ...later];
    expect(new Set(all).size).toBe(all.length);
    for (const id of all) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // The random pool is refilled every 256 ids: the next batch must not repeat the last.
    expect(new Set(first.map((id) => id.slice(14))).size).toBe(first.length);
    expect(first.every((id) => id < later[0]!)).toBe(true);
  });
});
