/**
 * Bearer authentication and the active team, for every API route that is not public.
 * A key is looked up by its hash (access.ts); the principal's memberships decide which teams it
 * may act for. A request that waits or stays open re-checks or watches what it was admitted with.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hashApiKey } from './api-key.js';
import { Forbidden, Unauthorized } from '../kernel/errors.js';
import type { Access, Admission, Watch } from './access.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** What the request was admitted with; null on public routes. */
    admission: Admission | null;
    /** What keys open (access.ts). */
    access: Access;
  }
}

const TEAM_HEADER = 'x-service-team-uid';

export function bearer(req: FastifyRequest): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

export function installAuth(app: FastifyInstance, access: Access): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('team', null);
  app.decorateRequest('admission', null);
  app.decorateRequest('access', { getter: () => access });
  app.addHook('onRequest', async (req) => {
    if (req.routeOptions.config.public || req.routeOptions.url === undefined) return;
    const key = bearer(req);
    if (!key) throw new Unauthorized();
    const keyHash = hashApiKey(key);
    const principal = await access.resolve(keyHash);
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
    req.admission = { keyHash, principal, team: req.team?.uid ?? null };
  });
}

/** The active team, or a 403 for a principal that belongs to none. */
export function activeTeam(req: FastifyRequest): { uid: string; role: 'admin' | 'member' } {
  if (!req.team) throw new Forbidden('the caller belongs to no team');
  return req.team;
}

const admissionOf = (req: FastifyRequest): Admission => {
  if (!req.admission) throw new Unauthorized();
  return req.admission;
};

/**
 * Before a request that has waited hands anything out: 401 when its key no longer opens its
 * principal, 403 when the principal left the team it acts for (asked of the read models themselves).
 */
export const recheckAdmission = (req: FastifyRequest): Promise<void> => req.access.recheck(admissionOf(req));

/** For a request held open: aborts, with the 401/403 to answer, once its admission lapses. Stop it when done. */
export const watchAdmission = (req: FastifyRequest): Watch => req.access.watch(admissionOf(req));
