/** Agent skills, one document per team and `owner/repo:path`, with the newest run that used each. */
import { projection } from '../../src/projector/projection.js';
import type { RunEvent } from '../../commands/run/events.js';
import { type Skill, type SkillEvent, skillSpec } from '../../commands/skill/events.js';

export interface SkillDoc extends Skill {
  [field: string]: unknown;
  team_uid: string;
  /** `owner/repo:path`, as runs name it in `skill_spec`. */
  spec: string;
  name_key: string;
  /** Set by the runs that name the skill once it is known. */
  last_run_timestamp: string | null;
}

const idOf = (team: string, spec: string) => `${team}|${spec}`;

export const skillsProjection = projection<SkillEvent | RunEvent, SkillDoc>({
  name: 'skills',
  version: 1,
  indexes: [
    ['team_uid', 'name_key'],
    ['team_uid', 'repo'],
  ],
  on: {
    SkillsReported: async (e, docs) => {
      const { team_uid, removed, skills } = e.data;
      for (const spec of removed) docs.delete(idOf(team_uid, spec));
      for (const skill of skills) {
        const spec = skillSpec(skill);
        const known = await docs.get(idOf(team_uid, spec));
        docs.put(idOf(team_uid, spec), {
          ...skill,
          team_uid,
          spec,
          name_key: skill.name.toLowerCase(),
          last_run_timestamp: known?.last_run_timestamp ?? null,
        });
      }
    },
    RunCreated: (e, docs) => {
      if (e.data.skill_spec)
        docs.patch(idOf(e.data.executing_team_uid, e.data.skill_spec), { last_run_timestamp: e.metadata.occurred_at });
    },
  },
});
