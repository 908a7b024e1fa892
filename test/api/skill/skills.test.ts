/** GET /agent: the skills the team's workers report, grouped by name, with the environments that offer them. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSkill } from '../../../src/cli/worker/skills.js';
import { expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
let key = '';
let worker = '';
beforeAll(async () => {
  t = await startTestApp();
  const agent = (await t.call('POST', '/agent/identities', { name: 'Runner' })).json();
  key = (await t.call('POST', `/agent/identities/${agent.uid}/api-keys`)).json().api_key;
  worker = (await t.call('POST', '/agent/workers', { host: 'box' }, key)).json().worker_id;
});
afterAll(() => t.close());

const skill = (repo: string, path: string, name: string, error: string | null = null) => ({
  repo,
  path,
  name,
  description: `${name} things`,
  base_prompt: `Do ${name}.`,
  error,
});
const report = (repos: string[], skills: ReturnType<typeof skill>[]) =>
  t.call('PUT', `/agent/workers/${worker}/skills`, { repos, skills }, key);
const list = async (query = '') =>
  (await t.call('GET', `/agent${query}`)).json().agents as Array<{ name: string; variants: Array<{ id: string }> }>;

describe('agent skills', () => {
  it('groups the reported skills by name, hides malformed ones unless asked, and filters by repository', async () => {
    await t.call('POST', '/agent/environments', {
      name: 'Tools box',
      github_repos: [{ owner: 'acme', repo: 'tools' }],
    });
    expect(
      (
        await report(
          ['acme/tools', 'acme/web'],
          [
            skill('acme/tools', 'skills/lint/SKILL.md', 'lint'),
            skill('acme/web', '.claude/skills/lint/SKILL.md', 'lint'),
            skill('acme/web', 'skills/deploy/SKILL.md', 'deploy'),
            skill('acme/web', 'skills/broken/SKILL.md', 'broken', 'no front matter'),
          ],
        )
      ).statusCode,
    ).toBe(200);
    const all = await list();
    expect(all.map((s) => s.name)).toEqual(['deploy', 'lint']);
    expect(all[1]!.variants).toEqual([
      expect.objectContaining({
        id: 'acme/tools:skills/lint/SKILL.md',
        environments: [{ name: 'Tools box', uid: expect.any(String) }],
        source: { owner: 'acme', name: 'tools', skill_path: 'skills/lint/SKILL.md' },
        last_run_timestamp: null,
      }),
      expect.objectContaining({ id: 'acme/web:.claude/skills/lint/SKILL.md', environments: [] }),
    ]);
    expect((await list('?include_malformed_skills=true')).map((s) => s.name)).toEqual(['broken', 'deploy', 'lint']);
    expect((await list('?repo=acme/tools')).map((s) => s.name)).toEqual(['lint']);
  });

  it('sorts by the newest run that used a skill', async () => {
    await t.call('POST', '/agent/runs', { skill: 'acme/web:skills/deploy/SKILL.md' });
    expect((await list('?sort_by=last_run')).map((s) => s.name)).toEqual(['deploy', 'lint']);
  });

  it('replaces what it knew of a repository with each report', async () => {
    await report(['acme/web'], [skill('acme/web', 'skills/deploy/SKILL.md', 'deploy')]);
    expect((await list('?include_malformed_skills=true')).map((s) => s.name)).toEqual(['deploy', 'lint']);
  });

  it('refuses a skill of a repository the report does not name, and bad queries', async () => {
    await expectRefused(t, () => report(['acme/web'], [skill('acme/other', 'SKILL.md', 'x')]), 400);
    await expectRefused(t, () => t.call('GET', '/agent?sort_by=size'), 400);
    await expectRefused(t, () => t.call('GET', '/agent?repo=not-a-repo'), 400);
  });
});

describe('a SKILL.md', () => {
  it('gives its name and description from the front matter, its instructions from the rest', () => {
    expect(readSkill('a/b', 'x/SKILL.md', '---\nname: x\ndescription: does x\n---\nStep one.\n')).toMatchObject({
      name: 'x',
      description: 'does x',
      base_prompt: 'Step one.',
      error: null,
    });
  });

  it.each([
    ['Just text', /no YAML front matter/],
    ['---\nname: [unclosed\n---\n', /not YAML/],
    ['---\ndescription: d\n---\n', /no name/],
    ['---\nname: n\n---\n', /no description/],
  ])('is malformed: %j', (text, reason) => expect(readSkill('a/b', 'dir/SKILL.md', text).error).toMatch(reason));
});
