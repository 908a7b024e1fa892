/** GET /teams: the caller's teams with its role in each. */
import type { Runtime } from '../src/runtime.js';
import { teamsProjection } from '../projections/teams.js';
import type { Api } from '../src/http/api.js';

export default function teamQueries(api: Api, rt: Runtime): void {
  const teams = rt.readModel(teamsProjection);
  api.get('/teams', { schema: { tags: ['teams'] } }, async (req) => {
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
