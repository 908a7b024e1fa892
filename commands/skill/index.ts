/** Agent skills: the SKILL.md files workers find in the repositories they serve, listed by GET /agent. */
import { feature } from '../../src/feature.js';
import { skillsProjection } from '../../projections/skill/skills.js';
import skillQueries from '../../queries/skill/skills.js';

export const skillFeature = feature({ name: 'skill', routes: [skillQueries], projections: [skillsProjection] });
