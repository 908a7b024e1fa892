/** `GET /agent`: skills grouped by name (`AgentSkill`), each file a variant with its source and environments. */
import { z } from 'zod';
import type { EnvironmentDoc } from '../environment/public.js';
import type { SkillDoc } from '../../projections/skill/skills.js';

const variant = z.object({
  id: z.string().describe('owner/repo:path/to/SKILL.md, as a run names it in skill_spec'),
  base_prompt: z.string(),
  description: z.string(),
  environments: z.array(z.object({ name: z.string(), uid: z.string() })),
  source: z.object({ name: z.string(), owner: z.string(), skill_path: z.string() }),
  last_run_timestamp: z.string().nullable(),
  error: z.string().optional().describe('Why the SKILL.md is malformed (listed with include_malformed_skills)'),
});

export const agentSkillList = z.object({
  agents: z.array(z.object({ name: z.string(), variants: z.array(variant) })),
});

type AgentSkill = z.infer<typeof agentSkillList>['agents'][number];

/** The newest run of any variant ('' for none). */
const newest = (s: AgentSkill) =>
  s.variants
    .map((v) => v.last_run_timestamp ?? '')
    .sort()
    .at(-1) ?? '';

/** Skills grouped by name; an environment offers a skill when it checks out the skill's repository. */
export function toAgentSkills(
  docs: readonly SkillDoc[],
  environments: readonly EnvironmentDoc[],
  sortBy: 'name' | 'last_run',
): AgentSkill[] {
  const byName = new Map<string, AgentSkill>();
  for (const d of docs) {
    const [owner = '', name = ''] = d.repo.split('/');
    const envs = environments
      .filter((e) => e.config.github_repos.some((r) => `${r.owner}/${r.repo}`.toLowerCase() === d.repo.toLowerCase()))
      .map((e) => ({ name: e.config.name, uid: e.uid }));
    const skill = byName.get(d.name) ?? { name: d.name, variants: [] };
    skill.variants.push({
      id: d.spec,
      base_prompt: d.base_prompt,
      description: d.description,
      environments: envs,
      source: { name, owner, skill_path: d.path },
      last_run_timestamp: d.last_run_timestamp,
      ...(d.error ? { error: d.error } : {}),
    });
    byName.set(d.name, skill);
  }
  const skills = [...byName.values()];
  return sortBy === 'name'
    ? skills.sort((a, b) => a.name.localeCompare(b.name))
    : skills.sort((a, b) => newest(b).localeCompare(newest(a)) || a.name.localeCompare(b.name));
}
