/**
 * Teams, people and their API keys: who may call, for which team, and the audit of every grant and
 * revocation; the first start's bootstrap.
 */
import { feature } from '../../src/feature.js';
import { apiKeysProjection } from '../../projections/api-keys.js';
import { teamsProjection } from '../../projections/teams.js';
import { usersProjection } from '../../projections/users.js';
import { accessAuditProjection } from '../../projections/access-audit.js';
import { teamMembersProjection } from '../../projections/team-members.js';
import { userKeyQueries } from '../../queries/api-keys.js';
import { principalSource } from '../../queries/principals.js';
import teamAuditQueries from '../../queries/team-audit.js';
import teamQueries from '../../queries/teams.js';
import { bootstrap } from './bootstrap.js';
import teamRoutes from './routes.js';
import userKeyRoutes from '../user/api-keys.js';
import invitationRoutes from '../user/invitation.js';

export const teamFeature = feature({
  name: 'team',
  routes: [teamRoutes, invitationRoutes, userKeyRoutes, teamQueries, userKeyQueries, teamAuditQueries],
  projections: [apiKeysProjection, usersProjection, teamsProjection, teamMembersProjection, accessAuditProjection],
  principals: principalSource,
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
