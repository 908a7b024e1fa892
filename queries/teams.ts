/** GET /teams: the caller's teams with its role in each. */
import { z } from 'zod';
import type { Runtime } from '../src/runtime.js';
import { ROLES } from '../commands/team/events.js';
import { teamsProjection } from '../projections/teams.js';
import type { Api } from '../src/http/api.js';

const teamsResponse = z.object({
  teams: z
    .array(
      z.object({
        uid: z.string(),
        name: z.string(),
        role: z.enum(ROLES).describe("The caller's role in the team"),
        created_at: z.string(),
      }),
    )
    .describe('In the order the caller joined them'),
});

export default function teamQueries(api: Api, rt: Runtime): void {
  const teams = rt.readModel(teamsProjection);
  api.get('/teams', { schema: { response: { 200: teamsResponse }, tags: ['teams'] } }, async (req) => {
    const memberships = [...req.principal!.teams];
    const docs = await teams.getMany(memberships.map(([uid]) => uid));
    return {
      teams: memberships.flatMap(([uid, role]) => {
        const team = docs.get(uid);
        return team ? [{ uid, name: team.name, role, created_at: team.created_at }] : [];
      }),
    };
  });
}
