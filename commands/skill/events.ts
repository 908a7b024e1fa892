/**
 * The agent skills a team's workers found in the repositories they serve (`SKILL.md` files):
 * `skills-<team_uid>`. A report replaces what was known of the repositories it names.
 */

export interface Skill {
  /** `owner/repo`. */
  repo: string;
  /** The file's path in the repository, such as `.claude/skills/deploy/SKILL.md`. */
  path: string;
  name: string;
  description: string;
  /** The file's text after its front matter: the instructions. */
  base_prompt: string;
  /** Why the file is malformed; malformed skills are listed only when asked. */
  error: string | null;
}

export type SkillEvent = {
  type: 'SkillsReported';
  data: {
    team_uid: string;
    worker_id: string;
    repos: string[];
    /** The skills of those repositories now, new or changed. */
    skills: Skill[];
    /** Skills of those repositories that are gone, as `owner/repo:path`. */
    removed: string[];
  };
};

export const skillsStream = (teamUid: string) => `skills-${teamUid}`;

/** A skill's id, as runs name it in `skill_spec`: `owner/repo:path/to/SKILL.md`. */
export const skillSpec = (s: Pick<Skill, 'repo' | 'path'>) => `${s.repo}:${s.path}`;
