/**
 * A list's work is bounded whatever its filter (issue #30): a filter no index serves (a title
 * search, a metadata pair, a source) is checked on the documents the index walks, at most
 * LIST_MAX_SCAN of them a page. Past the bound the page is cut short, `has_next_page` true, and the
 * client pages on from where the walk stopped: a rare match is found by following the cursors,
 * never by one request walking the whole team.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

const BOUND = 10;
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ LIST_MAX_SCAN: String(BOUND) });
  // The needle first, then 24 runs after it: newest first, it is the last the walk reaches.
  for (const title of ['needle', ...Array.from({ length: 24 }, (_, i) => `hay ${i}`)]) {
    const res = await t.call('POST', '/agent/runs', { prompt: 'p', title, metadata: { kind: title.split(' ')[0]! } });
    expect(res.statusCode, res.body).toBe(200);
  }
});
afterAll(() => t.close());

/** Every page of a list, following the cursors: what each page held. */
async function pages(url: string): Promise<string[][]> {
  const seen: string[][] = [];
  let cursor: string | null = null;
  do {
    const res = await t.call('GET', `${url}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    seen.push((res.json().runs as Array<{ title: string }>).map((r) => r.title));
    cursor = res.json().page_info.next_cursor;
    expect(res.json().page_info.has_next_page).toBe(cursor !== null);
  } while (cursor && seen.length < 20);
  return seen;
}

describe('GET /agent/runs with a filter no index serves', () => {
  it.each([
    ['a title search', '/agent/runs?q=needle&limit=5'],
    ['a metadata pair', '/agent/runs?metadata[kind]=needle&limit=5'],
  ])('%s walks at most the bound a page, and the cursors lead to the match', async (_what, url) => {
    // 25 runs at 10 a page walked: cut short twice, empty, then the needle on the third.
    expect(await pages(url)).toEqual([[], [], ['needle']]);
  });

  it('a filter the index serves is not cut short', async () => {
    const all = await pages('/agent/runs?limit=25');
    expect(all).toHaveLength(1);
    expect(all[0]).toHaveLength(25);
  });

  it('a common match fills its page before the bound, as before', async () => {
    expect((await pages('/agent/runs?q=hay&limit=5'))[0]).toEqual(['hay 23', 'hay 22', 'hay 21', 'hay 20', 'hay 19']);
  });
});
