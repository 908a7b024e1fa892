/**
 * How an API key maps to the principal it opens, from the account read models: the key by its
 * hash, then its user (with the user's memberships) or its agent (with the agent's team). The
 * platform caches and watches the answers (src/http/access.ts), following these read models: a
 * revoked key, a removed membership or a deleted agent counts once the projector applies it.
 */
import type { PrincipalSource } from '../../src/http/access.js';
import type { Role } from '../../src/http/principal.js';
import type { Runtime } from '../../src/runtime.js';
import { apiKeysProjection } from '../../projections/user/api-keys.js';
import { identitiesProjection } from '../../commands/identity/public.js';
import { usersProjection } from '../../projections/user/users.js';

export function principalSource(rt: Runtime): PrincipalSource {
  const keys = rt.readModel(apiKeysProjection);
  const users = rt.readModel(usersProjection);
  const agents = rt.readModel(identitiesProjection);
  return {
    readModels: [apiKeysProjection, usersProjection, identitiesProjection],
    async lookUp(hash) {
      const key = await keys.get(hash);
      if (!key) return null;
      const expires = key.expires_at ? Date.parse(key.expires_at) : null;
      if (key.principal_type === 'user') {
        const user = await users.get(key.principal_uid);
        if (!user) return null;
        const teams = new Map(user.memberships.map((m) => [m.team_uid, m.role]));
        return { principal: { type: 'user', uid: user.uid, teams }, expires };
      }
      const agent = await agents.get(key.principal_uid);
      if (!agent) return null;
      const teams = new Map<string, Role>([[agent.team_uid, 'member']]);
      return { principal: { type: 'agent', uid: agent.uid, teams }, expires };
    },
  };
}
