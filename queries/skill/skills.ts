/**
 * GET /agent: the agent skills the caller's teams' workers found in their repositories. `refresh`
 * is accepted for clients of the hosted service; there is no cache to clear here (workers report
 * what they find when they connect).
 */
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { booleanParam } from '../../src/http/schemas.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Runtime } from '../../src/runtime.js';
import { agentSkillList, toAgentSkills } from '../../commands/skill/public.js';
import { environmentsProjection } from '../../commands/environment/public.js';
import { skillsProjection } from '../../projections/skill/skills.js';

const query = z
  .object({
    repo: z
      .string()
      .max(201)
      .regex(/^[\w.-]{1,100}\/[\w.-]{1,100}$/, 'owner/repo')
      .optional(),
    refresh: booleanParam,
    sort_by: z.enum(['name', 'last_run']).default('name'),
    include_malformed_skills: booleanParam,
  })
  .strict();

export default function skillQueries(api: Api, rt: Runtime): void {
  const skills = rt.readModel(skillsProjection);
  const environments = rt.readModel(environmentsProjection);
  api.get(
    '/agent',
    { schema: { querystring: query, response: { 200: agentSkillList }, tags: ['skills'] } },
    async (req) => {
      const { repo, sort_by, include_malformed_skills } = req.query;
      const teams = { $in: [...req.principal!.teams.keys()] };
      const sort = [
        ['name_key', 'asc'],
        ['id', 'asc'],
      ] as const;
      const [found, envs] = await Promise.all([
        findAll(skills, { filter: { team_uid: teams }, sort, limit: 500 }),
        findAll(environments, { filter: { team_uid: teams }, sort: [['id', 'asc']], limit: 500 }),
      ]);
      const shown = found.filter(
        (s) => (include_malformed_skills || !s.error) && (!repo || s.repo.toLowerCase() === repo.toLowerCase()),
      );
      return { agents: toAgentSkills(shown, envs, sort_by) };
    },
  );
}
