/**
 * The HTTP application: Fastify with zod schemas, OpenAPI, problem+json errors, bearer auth and
 * one log line per request. Built without listening so tests drive it through `inject`.
 */
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { z } from 'zod';
import { timeOrderedId } from '../ids.js';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Runtime } from '../runtime.js';
import type { Feature } from '../feature.js';
import blobRoutes from '../blobs/routes.js';
import { Access } from './access.js';
import { installAuth } from './auth.js';
import { serveConsole } from './console.js';
import sessionRoutes from './session-routes.js';
import { SESSIONS, Sessions } from './sessions.js';
import { IDEMPOTENCY_HEADER, installIdempotency, REPLAYED_HEADER } from './idempotency.js';
import type { Api } from './api.js';
import { listenerOptions, watchClients } from './listener.js';
import { redactUrl } from './redact-url.js';
import { shedLoad } from './load-shedding.js';
import { countedInsteadOfLogged } from './throttled-log.js';
import { errorHandler, frameworkErrorHandler, problemSchema, sendProblem } from './problem.js';
import { responseSerializer } from './serializer.js';
import './principal.js';

const API_PREFIX = '/api/v1';

/** Every error of every route is a problem document (problem.ts), declared once for the OpenAPI document. */
const problemResponse = {
  description: 'An error, as application/problem+json',
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
};

/** The Idempotency-Key header of the routes that honour one (idempotency.ts), for the OpenAPI document. */
const idempotencyKeyHeader = {
  type: 'object',
  properties: {
    [IDEMPOTENCY_HEADER]: {
      type: 'string',
      minLength: 1,
      maxLength: 257,
      description: `Optional. A retry with the same key and the same request within 24 hours answers the first answer again, with \`${REPLAYED_HEADER}: true\`; the key with another request is a 422 \`idempotency_key_reused\`, and while the first is being processed a 409 \`idempotency_key_in_use\` (retryable). 1-255 visible ASCII characters, bare or quoted; keys are the caller's own.`,
    },
  },
};

const withProblems: typeof jsonSchemaTransform = (route) => {
  const out = jsonSchemaTransform(route);
  const schema = out.schema as { response?: Record<string, unknown>; headers?: unknown } | undefined;
  if (schema?.response) schema.response = { ...schema.response, '4XX': problemResponse, '5XX': problemResponse };
  if (schema && route.route?.config?.idempotent) {
    const given = schema.headers as { properties?: object } | undefined;
    schema.headers = {
      ...idempotencyKeyHeader,
      ...given,
      properties: { ...given?.properties, ...idempotencyKeyHeader.properties },
    };
  }
  return out;
};

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

export async function buildApp(rt: Runtime, features: readonly Feature[]) {
  const principals = features.find((f) => f.principals)?.principals?.(rt);
  if (!principals) throw new Error('no feature resolves API keys to principals');
  const access = new Access(principals, rt.projector, rt.clock);
  await rt.docs.ensureCollection(SESSIONS, [['seen_at']]);
  const sessions = new Sessions(rt.docs, rt.clock, {
    idleMs: rt.config.CONSOLE_SESSION_IDLE_MINUTES * 60_000,
    maxMs: rt.config.CONSOLE_SESSION_MAX_HOURS * 3_600_000,
  });
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
  await shedLoad(app, rt.config, rt.log);

  // Remember every route's path so that a wrong method answers 405 rather than 404.
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

  app.decorateRequest('now', '');
  app.addHook('onRequest', async (req) => {
    req.now = rt.clock.now().toISOString();
  });

  app.addHook('onResponse', async (req, reply) => {
    if (!countedInsteadOfLogged(req)) logRequest(req, reply);
  });

  await app.register(swagger, {
    openapi: {
      info: { title: 'Shopfloor API', version: '1.0.0', description: 'Factories, tasks, agent runs and webhooks' },
      servers: [{ url: rt.config.publicBaseUrl }],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
        // The Problem schema as JSON Schema, the form the OpenAPI document holds.
        schemas: { Problem: z.toJSONSchema(problemSchema, { target: 'openapi-3.0' }) as never },
      },
      security: [{ bearer: [] }],
    },
    transform: withProblems,
    // Schemas given an id (`.meta({ id })`, as recursive ones must be) become components of their own.
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  await app.register(cookie);
  const consolePage = await serveConsole(app, rt.log);

  app.get('/healthz', { schema: { hide: true }, config: { notShed: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const notReady = (detail: string) => sendProblem(reply, 503, 'not_ready', 'Not ready', detail);
    if (!rt.projector.isReady) return notReady('The read models are still catching up with the event log');
    if (rt.projector.isFailing) return notReady('The read models cannot be written; the projector is retrying');
    const setAside = await rt.projector.setAside().catch(() => null);
    if (!setAside) return notReady('The read store did not answer');
    // Events set aside do not make the process unready: it serves every read model, the affected
    // one without those events (docs: operations, set-aside events). Names and counts only: this
    // route needs no credential.
    return { status: 'ready', set_aside: setAside };
  });

  await app.register(
    async (api) => {
      installAuth(api, { access, sessions, publicBaseUrl: rt.config.publicBaseUrl });
      installIdempotency(api, rt);
      api.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
      const scoped = api as unknown as Api; // same logger and provider as `app`
      blobRoutes(scoped, rt);
      sessionRoutes(scoped, sessions, rt.config.publicBaseUrl);
      for (const f of features) for (const routes of f.routes ?? []) routes(scoped, rt);
    },
    { prefix: API_PREFIX },
  );
  for (const f of features) for (const routes of f.rootRoutes ?? []) routes(app, rt);

  app.setNotFoundHandler((req, reply) => {
    if (consolePage(req, reply)) return reply;
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(req.url.split('?')[0]!)).map((r) => r.method))];
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

  return app;
}
