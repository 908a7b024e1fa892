/**
 * Resolves an API key hash to the principal it opens, from the account read models. Every
 * request asks, so answers are cached until the projector next changes one of those read models:
 * a revoked key, a removed membership or a deleted agent is seen by the next request after the
 * projector applies it, in every process. Expiry is checked on every request, cached or not.
 */
import type { PrincipalResolver } from '../src/http/auth.js';
import type { Principal, Role } from '../src/http/principal.js';
import type { Runtime } from '../src/runtime.js';
import { apiKeysProjection } from '../projections/api-keys.js';
import { identitiesProjection } from '../projections/identities.js';
import { usersProjection } from '../projections/users.js';

/** The principal a key opens, and when the key stops opening it (ms since the epoch; null: never). */
type Found = { principal: Principal; expires: number | null };

/** Enough for every key in use at once; past it the cache starts over rather than grow. */
const CACHE_LIMIT = 10_000;

export function principalResolver(rt: Runtime): PrincipalResolver {
  const keys = rt.readModel(apiKeysProjection);
  const users = rt.readModel(usersProjection);
  const agents = rt.readModel(identitiesProjection);

  async function lookUp(hash: string): Promise<Found | null> {
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
  }

  // The change counts only grow, so their sum moves whenever any of the three read models changes.
  const sources = [apiKeysProjection, usersProjection, identitiesProjection];
  const generation = () => sources.reduce((sum, p) => sum + rt.projector.changes(p), 0);
  let cachedAt = generation();
  const cache = new Map<string, Promise<Found | null>>();
  const unexpired = (found: Found | null) =>
    found && (found.expires === null || found.expires > rt.clock.now().getTime()) ? found.principal : null;
  return (hash) => {
    const now = generation();
    if (now !== cachedAt || cache.size >= CACHE_LIMIT) {
      cache.clear();
      cachedAt = now;
    }
    let found = cache.get(hash);
    if (!found) {
      found = lookUp(hash);
      cache.set(hash, found);
      // A failed lookup is not an answer: the next request asks again.
      found.catch(() => cache.delete(hash));
    }
    return found.then(unexpired);
  };
}
