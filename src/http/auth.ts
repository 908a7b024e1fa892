/**
 * Bearer authentication and the active team, for every API route that is not public.
 * A key is looked up by its hash; the principal's memberships decide which teams it may act for.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hashApiKey } from './api-key.js';
import { Forbidden, Unauthorized } from '../kernel/errors.js';
import type { Principal } from './principal.js';

export type PrincipalResolver = (keyHash: string) => Promise<Principal | null>;

const TEAM_HEADER = 'x-service-team-uid';

export function bearer(req: FastifyRequest): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

export function installAuth(app: FastifyInstance, resolve: PrincipalResolver): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('team', null);
  app.addHook('onRequest', async (req) => {
    if (req.routeOptions.config.public || req.routeOptions.url === undefined) return;
    const key = bearer(req);
    if (!key) throw new Unauthorized();
    const principal = await resolve(hashApiKey(key));
    if (!principal) throw new Unauthorized('The API key is not valid or has been revoked');
    req.principal = principal;
    const wanted = req.headers[TEAM_HEADER];
    if (typeof wanted === 'string' && wanted !== '') {
      const role = principal.teams.get(wanted);
      if (!role) throw new Forbidden(`not a member of team ${wanted}`);
      req.team = { uid: wanted, role };
    } else {
      const [first] = principal.teams;
      req.team = first ? { uid: first[0], role: first[1] } : null;
    }
  });
}

/** The active team, or a 403 for a principal that belongs to none. */
export function activeTeam(req: FastifyRequest): { uid: string; role: 'admin' | 'member' } {
  if (!req.team) throw new Forbidden('the caller belongs to no team');
  return req.team;
}
