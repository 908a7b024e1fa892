/**
 * The console's sign-in and sign-out: `POST /session` exchanges a user's API key for a session
 * cookie (sessions.ts), `GET /session` says who the cookie stands for, `DELETE /session` ends it on
 * the server. The cookie is `HttpOnly`, `SameSite=Strict`, sent to /api/ only, and `Secure` when the
 * public base URL is https. Agent keys cannot sign in: the console is for people.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DomainError, NotFound, Unauthorized } from '../kernel/errors.js';
import { hashApiKey } from './api-key.js';
import type { Api } from './api.js';
import { sessionToken } from './auth.js';
import { noContent } from './schemas.js';
import type { Principal } from './principal.js';
import { assertSameOrigin } from './same-origin.js';
import { SESSION_COOKIE, type Session, type Sessions } from './sessions.js';

const COOKIE_PATH = '/api/';

const signInBody = z.object({ api_key: z.string().min(1).max(512).describe('A user API key') }).strict();

const sessionAnswer = z.object({
  user_uid: z.string(),
  teams: z
    .array(z.object({ uid: z.string(), role: z.enum(['admin', 'member']) }))
    .describe('The teams the key opens, in the order the user joined them; the first is the default'),
  expires_at: z.string().describe('When the session ends unless it is used before (idle timeout)'),
  idle_timeout_seconds: z.int(),
});

class AgentCannotSignIn extends DomainError {
  constructor() {
    super(403, 'agent_cannot_sign_in', 'Forbidden', 'Agent keys cannot sign in to the console: use a user API key');
  }
}

export default function sessionRoutes(api: Api, sessions: Sessions, publicBaseUrl: string): void {
  const tags = ['console sessions'];
  const secure = publicBaseUrl.startsWith('https:');
  const answer = (principal: Principal, session: Session) => ({
    user_uid: principal.uid,
    teams: [...principal.teams].map(([uid, role]) => ({ uid, role })),
    expires_at: new Date(session.expiresAt).toISOString(),
    idle_timeout_seconds: Math.round(sessions.limits.idleMs / 1000),
  });

  api.post(
    '/session',
    {
      schema: { body: signInBody, response: { 201: sessionAnswer }, tags, security: [] },
      config: { public: true },
    },
    async (req, reply) => {
      assertSameOrigin(req, publicBaseUrl);
      const keyHash = hashApiKey(req.body.api_key);
      const principal = await req.access.resolve(keyHash);
      if (!principal) throw new Unauthorized('The API key is not valid or has been revoked');
      if (principal.type !== 'user') throw new AgentCannotSignIn();
      const { token, session } = await sessions.open(keyHash, principal.uid);
      reply.setCookie(SESSION_COOKIE, token, {
        path: COOKIE_PATH,
        httpOnly: true,
        sameSite: 'strict',
        secure,
        maxAge: Math.round(sessions.limits.maxMs / 1000),
      });
      return reply.code(201).send(answer(principal, session));
    },
  );

  api.get('/session', { schema: { response: { 200: sessionAnswer }, tags } }, async (req) => {
    // A bearer request has no session to describe.
    if (!req.session || !req.principal) throw new NotFound('console session');
    return answer(req.principal, req.session);
  });

  const signOut = async (req: FastifyRequest, reply: FastifyReply) => {
    const token = sessionToken(req);
    if (token) {
      assertSameOrigin(req, publicBaseUrl);
      await sessions.endToken(token);
    }
    reply.clearCookie(SESSION_COOKIE, { path: COOKIE_PATH, httpOnly: true, sameSite: 'strict', secure });
    return reply.code(204).send(null);
  };
  api.delete(
    '/session',
    {
      schema: { response: { 204: noContent('Signed out: the session is ended on the server') }, tags, security: [] },
      config: { public: true },
    },
    signOut,
  );
}
