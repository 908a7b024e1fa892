/** A request no route takes: the console's page, a 405 naming the methods its path allows, or a 404. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from './api.js';
import { redactUrl } from './redact-url.js';
import { sendProblem } from './problem.js';

/** The methods each path allows, gathered as routes are registered (from the call on). */
export type AllowedMethods = (url: string) => string[];

/** Remembers every route's path so that a wrong method answers 405 rather than 404. */
export function rememberRoutes(app: Api): AllowedMethods {
  const routes: Array<{ method: string; pattern: RegExp }> = [];
  app.addHook('onRoute', (route) => {
    const pattern = new RegExp(
      `^${route.url
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/:[^/]+/g, '[^/]+')
        .replace(/\*/g, '.*')}/?$`,
    );
    for (const method of [route.method].flat()) routes.push({ method, pattern });
  });
  return (url) => [...new Set(routes.filter((r) => r.pattern.test(url.split('?')[0]!)).map((r) => r.method))];
}

/** `consolePage` answers a request of the web console's and says whether it did. */
export function answerNotFound(
  app: Api,
  allowedMethods: AllowedMethods,
  consolePage: (req: FastifyRequest, reply: FastifyReply) => boolean,
): void {
  app.setNotFoundHandler((req, reply) => {
    if (consolePage(req, reply)) return reply;
    const allowed = allowedMethods(req.url);
    const path = redactUrl(req.url);
    if (allowed.length) {
      reply.header('allow', allowed.join(', '));
      return sendProblem(
        reply,
        405,
        'method_not_allowed',
        'Method not allowed',
        `${req.method} is not allowed on ${path}`,
      );
    }
    return sendProblem(reply, 404, 'not_found', 'Not found', `no route for ${req.method} ${path}`);
  });
}
