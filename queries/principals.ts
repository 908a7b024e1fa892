/** Resolves an API key hash to the principal it opens, from the account read models. */
import type { PrincipalResolver } from '../src/http/auth.js';
import type { Role } from '../src/http/principal.js';
import type { Runtime } from '../src/runtime.js';
import { apiKeysProjection, type ApiKeyDoc } from '../projections/api-keys.js';
import { identitiesProjection, type IdentityDoc } from '../projections/identities.js';
import { usersProjection, type UserDoc } from '../projections/users.js';

export function principalResolver(rt: Runtime): PrincipalResolver {
  const keys = rt.readModel<ApiKeyDoc>(apiKeysProjection);
  const users = rt.readModel<UserDoc>(usersProjection);
  const agents = rt.readModel<IdentityDoc>(identitiesProjection);
  return async (hash) => {
    const key = await keys.get(hash);
    if (!key) return null;
    if (key.principal_type === 'user') {
      const user = await users.get(key.principal_uid);
      if (!user) return null;
      return { type: 'user', uid: user.uid, teams: new Map(user.memberships.map((m) => [m.team_uid, m.role])) };
    }
    const agent = await agents.get(key.principal_uid);
    if (!agent) return null;
    return { type: 'agent', uid: agent.uid, teams: new Map<string, Role>([[agent.team_uid, 'member']]) };
  };
}
