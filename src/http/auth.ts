/**
 * Authentication and the active team, for every API route that is not public: a bearer key, or
 * the console's session cookie standing for one (sessions.ts), admitted alike. A key is looked up
 * by its hash (access.ts); the principal's memberships decide which teams it may act for. A
 * request that waits or stays open re-checks or watches what it was admitted with.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hashApiKey } from './api-key.js';
import { Forbidden, Unauthorized } from '../kernel/errors.js';
import type { Access, Admission, Watch } from './access.js';
import type { Principal } from './principal.js';
import { assertSameOrigin } from './same-origin.js';
import { SESSION_COOKIE, type Session, type Sessions } from './sessions.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The active team may come as `?team_uid=` too (never a credential): a browser's EventSource
     * cannot send the team header.
     */
    teamInQuery?: boolean;
  }
  interface FastifyRequest {
    /** What the request was admitted with; null on public routes. */
    admission: Admission | null;
    /** What keys open (access.ts). */
    access: Access;
    /** The console session the request came with, when it had no bearer key. */
    session: Session | null;
  }
}

const TEAM_HEADER = 'x-service-team-uid';

export function bearer(req: FastifyRequest): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

/** The console session's cookie token, when the request has one. */
export const sessionToken = (req: FastifyRequest): string | null => req.cookies?.[SESSION_COOKIE] || null;

/**
 * The principal a session's key opens, as for a bearer request with that key; a session whose key
 * no longer opens its user (revoked, expired, the user deleted) ends here, on whichever process.
 */
async function admitSession(access: Access, sessions: Sessions, session: Session): Promise<Principal> {
  const principal = await access.resolve(session.keyHash);
  if (principal?.type === 'user' && principal.uid === session.userUid) return principal;
  await sessions.end(session.id);
  throw new Unauthorized('The API key of this console session is not valid or has been revoked: sign in again');
}

interface Credentials {
  access: Access;
  sessions: Sessions;
  publicBaseUrl: string;
}

/** The key a request comes with (by hash) and the principal it opens: its bearer key, else its session's. */
async function admitKey(req: FastifyRequest, c: Credentials): Promise<{ keyHash: string; principal: Principal }> {
  const key = bearer(req);
  if (key) {
    const keyHash = hashApiKey(key);
    const principal = await c.access.resolve(keyHash);
    if (!principal) throw new Unauthorized('The API key is not valid or has been revoked');
    return { keyHash, principal };
  }
  const token = sessionToken(req);
  if (!token) throw new Unauthorized();
  assertSameOrigin(req, c.publicBaseUrl);
  req.session = await c.sessions.use(token);
  return { keyHash: req.session.keyHash, principal: await admitSession(c.access, c.sessions, req.session) };
}

function teamInQuery(req: FastifyRequest): string | undefined {
  if (!req.routeOptions.config.teamInQuery) return undefined;
  const team = (req.query as Record<string, unknown> | undefined)?.team_uid;
  return typeof team === 'string' ? team : undefined;
}

export function installAuth(app: FastifyInstance, credentials: Credentials): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('team', null);
  app.decorateRequest('admission', null);
  app.decorateRequest('session', null);
  app.decorateRequest('access', { getter: () => credentials.access });
  app.addHook('onRequest', async (req) => {
    if (req.routeOptions.config.public || req.routeOptions.url === undefined) return;
    const { keyHash, principal } = await admitKey(req, credentials);
    req.principal = principal;
    const wanted = req.headers[TEAM_HEADER] ?? teamInQuery(req);
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
