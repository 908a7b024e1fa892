/**
 * Teams and their members: who belongs to which team, with which role, and the audit of every
 * grant and revocation; the first start's bootstrap.
 */
import { feature } from '../../src/feature.js';
import { teamsProjection } from '../../projections/team/teams.js';
import { accessAuditProjection } from '../../projections/team/access-audit.js';
import { teamMembersProjection } from '../../projections/team/team-members.js';
import teamAuditQueries from '../../queries/team/team-audit.js';
import teamQueries from '../../queries/team/teams.js';
import { bootstrap } from './bootstrap.js';
import teamRoutes from './routes.js';

export const teamFeature = feature({
  name: 'team',
  routes: [teamRoutes, teamQueries, teamAuditQueries],
  projections: [teamsProjection, teamMembersProjection, accessAuditProjection],
  async start(rt) {
    const first = await bootstrap(rt);
    if (first) {
      rt.log.info({ team_uid: first.team_uid, user_uid: first.user_uid }, 'bootstrapped an empty store');
      // Printed once, on purpose outside the log stream: this is the only time the key is shown.
      if (first.generated_api_key) process.stdout.write(`\nAdmin API key (shown once): ${first.generated_api_key}\n\n`);
    }
    return first;
  },
});
