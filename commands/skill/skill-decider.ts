/** Records a report only for what it changes: a worker reporting the same skills again is a no-op. */
import type { Decider } from '../../src/kernel/decider.js';
import { type Skill, type SkillEvent, skillSpec } from './events.js';
import { own, putOwn } from '../../src/own-keys.js';

export type SkillCommand = {
  type: 'ReportSkills';
  data: { team_uid: string; worker_id: string; repos: string[]; skills: Skill[] };
};

/** Skills by `owner/repo:path`. */
export type SkillsState = { skills: Record<string, Skill> };

export const skillDecider: Decider<SkillCommand, SkillEvent, SkillsState> = {
  initialState: () => ({ skills: {} }),
  evolve: (state, event) => {
    const skills = { ...state.skills };
    for (const spec of event.data.removed) delete skills[spec];
    for (const s of event.data.skills) putOwn(skills, skillSpec(s), s);
    return { skills };
  },
  decide: ({ data }, state) => {
    const repos = new Set(data.repos);
    const now = new Map(data.skills.filter((s) => repos.has(s.repo)).map((s) => [skillSpec(s), s]));
    const changed = [...now.values()].filter(
      (s) => JSON.stringify(own(state.skills, skillSpec(s))) !== JSON.stringify(s),
    );
    const removed = Object.values(state.skills)
      .filter((s) => repos.has(s.repo) && !now.has(skillSpec(s)))
      .map(skillSpec);
    if (!changed.length && !removed.length) return [];
    return [{ type: 'SkillsReported', data: { ...data, skills: changed, removed } }];
  },
};
