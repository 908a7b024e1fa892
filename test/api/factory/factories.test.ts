import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const create = (body: unknown, key?: string, headers?: Record<string, string>) =>
  t.call('POST', '/factory', body, key, headers);

describe('factories', () => {
  it('creates, reads, updates and deletes a factory, each visible at once', async () => {
    const res = await create({ name: 'Payments', alias: 'pay', repositories: [{ owner: 'acme', repo: 'billing' }] });
    expect(res.statusCode, res.body).toBe(201);
    const factory = res.json();
    expect(factory).toMatchObject({
      name: 'Payments',
      alias: 'pay',
      team_uid: t.teamUid,
      repositories: [{ owner: 'acme', repo: 'billing' }],
    });

    expect((await t.call('GET', `/factory/${factory.uid}`)).json()).toEqual(factory);

    const patched = await t.call('PATCH', `/factory/${factory.uid}`, { description: 'Card payments' });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ name: 'Payments', description: 'Card payments' });

    expect((await t.call('DELETE', `/factory/${factory.uid}`)).statusCode).toBe(204);
    expectProblem(await t.call('GET', `/factory/${factory.uid}`), 404);
    expect((await t.call('GET', '/factory?search=payments')).json().factories).toEqual([]);
  });

  it('searches name and alias case-insensitively and pages with a cursor', async () => {
    for (const [name, alias] of [
      ['Alpha', 'one'],
      ['Beta', 'SEARCHME'],
      ['Gamma search', null],
      ['Delta', 'x'],
      ['Epsilon Searchme', null],
    ]) {
      expect((await create({ name, alias })).statusCode).toBe(201);
    }
    const found = (await t.call('GET', '/factory?search=searchme')).json();
    expect(found.factories.map((f: { name: string }) => f.name)).toEqual(['Beta', 'Epsilon Searchme']);

    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const page: {
        factories: Array<{ name: string }>;
        page_info: { has_next_page: boolean; next_cursor: string | null };
      } = (await t.call('GET', `/factory?limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json();
      expect(page.factories.length).toBeLessThanOrEqual(2);
      names.push(...page.factories.map((f) => f.name));
      cursor = page.page_info.next_cursor;
      expect(page.page_info.has_next_page).toBe(cursor !== null);
    } while (cursor);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['Alpha', 'Beta', 'Delta', 'Gamma search', 'Epsilon Searchme']));
  });

  it('refuses bad limits, bad cursors and unknown query parameters', async () => {
    for (const q of [
      'limit=0',
      'limit=101',
      'limit=abc',
      'cursor=%%%',
      'cursor=eyJzIjoib3RoZXIiLCJ2IjpbXX0',
      'bogus=1',
    ]) {
      expectProblem(await t.call('GET', `/factory?${q}`), 400);
    }
  });

  it('refuses invalid bodies with field errors and writes nothing', async () => {
    const body = await expectRefused(t, () => create({ name: '' }), 400, 'invalid_request');
    expect(body.errors[0].path).toBe('body.name');
    await expectRefused(t, () => create({ name: 'x', extra: true }), 400);
    await expectRefused(t, () => create({ name: 'x', repositories: [{ owner: 'a' }] }), 400);
    await expectRefused(t, () => create('{"name": '), 400);
    await expectRefused(t, () => t.call('PATCH', '/factory/nope', {}), 400);
  });

  it('hides the factories of other teams', async () => {
    const other = (await t.call('POST', '/teams', { name: 'Other' })).json();
    const member = await t.addMember(other.uid, { email: 'outsider@example.com' });
    // The outsider's only team is `other`: the admin's factories are not theirs.
    const mine = (await create({ name: 'Secret' })).json();
    await expectRefused(t, () => t.call('GET', `/factory/${mine.uid}`, undefined, member.api_key), 404);
    await expectRefused(t, () => t.call('PATCH', `/factory/${mine.uid}`, { name: 'Mine now' }, member.api_key), 404);
    await expectRefused(t, () => t.call('DELETE', `/factory/${mine.uid}`, undefined, member.api_key), 404);
    await expectRefused(t, () => t.call('GET', `/factory?team_uid=${t.teamUid}`, undefined, member.api_key), 403);
    expect((await t.call('GET', '/factory', undefined, member.api_key)).json().factories).toEqual([]);
    // The team header selects the other team for the admin, who belongs to both.
    const there = await create({ name: 'Elsewhere' }, undefined, { 'x-service-team-uid': other.uid });
    expect(there.json().team_uid).toBe(other.uid);
    expect(
      (await t.call('GET', `/factory?team_uid=${other.uid}`)).json().factories.map((f: { name: string }) => f.name),
    ).toEqual(['Elsewhere']);
  });
});
