/**
 * The HTTP application: Fastify with zod schemas, OpenAPI, problem+json errors, bearer auth and
 * one log line per request. Built without listening so tests drive it through `inject`.
 */
import cookie from '@fastify/cookie';
import Fastify, { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { timeOrderedId } from '../ids.js';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Runtime } from '../runtime.js';
import type { Feature } from '../feature.js';
import blobRoutes from '../blobs/routes.js';
import { Access } from './access.js';
import { installAuth } from './auth.js';
import { serveConsole } from './console.js';
import sessionRoutes from './session-routes.js';
import eventStreamRoutes from '../streams/routes.js';
import { SESSIONS, Sessions } from './sessions.js';
import { installIdempotency } from './idempotency.js';
import type { Api } from './api.js';
import { listenerOptions, watchClients } from './listener.js';
import { redactUrl } from './redact-url.js';
import { shedLoad } from './load-shedding.js';
import { countedInsteadOfLogged } from './throttled-log.js';
import { errorHandler, frameworkErrorHandler } from './problem.js';
import { responseSerializer } from './serializer.js';
import { registerOpenApi } from './openapi.js';
import { healthRoutes } from './health-routes.js';
import { answerNotFound, rememberRoutes } from './not-found.js';
import { measureRequests } from '../metrics/http.js';
import { metricsRoute } from '../metrics/routes.js';
import { traceRequests } from '../tracing/http.js';
import './principal.js';

const API_PREFIX = '/api/v1';

/** The one log line of a request. */
function logRequest(req: FastifyRequest, reply: FastifyReply): void {
  req.log.info(
    {
      method: req.method,
      url: redactUrl(req.url),
      principal: req.principal ? `${req.principal.type}:${req.principal.uid}` : null,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
    },
    'request',
  );
}

/** Fastify with our listener limits, request ids, validation, serialization and errors. */
function createFastify(rt: Runtime) {
  const app = Fastify({
    // Timeouts, header size and the default body limit (listener.ts).
    ...listenerOptions(rt.config, rt.log),
    loggerInstance: rt.log,
    // Long path parameters reach the route schemas (and a problem+json 400) instead of a bare 414.
    routerOptions: { maxParamLength: 1000 },
    // Answered before any hook runs: the request's line is written here.
    frameworkErrors: (error, req, reply) => {
      frameworkErrorHandler(error, req, reply);
      logRequest(req, reply);
    },
    // Our onResponse hook writes the one line per request instead.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : timeOrderedId();
    },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(responseSerializer(rt.config.RESPONSE_SCHEMAS === 'strict'));
  app.setErrorHandler(errorHandler);
  // JSON routes take JSON: a text/plain body is a 415 like any other type no route parses, not a string
  // for the schema to refuse (the webhook ingress and worker uploads have parsers of their own).
  app.removeContentTypeParser('text/plain');
  watchClients(app, rt.config, rt.log);
  return app;
}

export async function buildApp(rt: Runtime, features: readonly Feature[]) {
  const principals = features.find((f) => f.principals)?.principals?.(rt);
  if (!principals) throw new Error('no feature resolves API keys to principals');
  const access = new Access(principals, rt.projector, rt.clock);
  await rt.docs.ensureCollection(SESSIONS, [['seen_at']]);
  const sessions = new Sessions(rt.docs, rt.clock, {
    idleMs: rt.config.CONSOLE_SESSION_IDLE_MINUTES * 60_000,
    maxMs: rt.config.CONSOLE_SESSION_MAX_HOURS * 3_600_000,
  });
  const app = createFastify(rt);
  measureRequests(app, rt.metrics);
  traceRequests(app, rt.tracing);
  await shedLoad(app, rt.config, rt.log, rt.metrics);
  const allowedMethods = rememberRoutes(app);

  app.decorateRequest('now', '');
  app.addHook('onRequest', async (req) => {
    req.now = rt.clock.now().toISOString();
  });
  app.addHook('onResponse', async (req, reply) => {
    if (!countedInsteadOfLogged(req)) logRequest(req, reply);
  });

  await registerOpenApi(app, rt.config.publicBaseUrl);
  await app.register(cookie);
  const consolePage = await serveConsole(app, rt.log);
  healthRoutes(app, rt);
  metricsRoute(app, rt.metrics, rt.config);

  await app.register(
    async (api) => {
      installAuth(api, { access, sessions, publicBaseUrl: rt.config.publicBaseUrl });
      installIdempotency(api, rt);
      api.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
      const scoped = api as unknown as Api; // same logger and provider as `app`
      blobRoutes(scoped, rt);
      sessionRoutes(scoped, sessions, rt.config.publicBaseUrl);
      eventStreamRoutes(scoped, rt);
      for (const f of features) for (const routes of f.routes ?? []) routes(scoped, rt);
    },
    { prefix: API_PREFIX },
  );
  for (const f of features) for (const routes of f.rootRoutes ?? []) routes(app, rt);

  answerNotFound(app, allowedMethods, consolePage);
  return app;
}
