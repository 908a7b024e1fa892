/**
 * The OpenAPI document, from the routes' zod schemas: every route's errors are problem documents,
 * and the routes that honour an Idempotency-Key declare the header. Served at `/docs` too.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { z } from 'zod';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { Api } from './api.js';
import { IDEMPOTENCY_HEADER, REPLAYED_HEADER } from './idempotency.js';
import { problemSchema } from './problem.js';
import { eventStreamResponse } from '../streams/openapi.js';

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
  const stream = route.route?.config?.eventStream;
  if (schema && stream) schema.response = { ...schema.response, 200: eventStreamResponse(stream) };
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

/** Registers the OpenAPI document of the routes registered from now on, and its pages at `/docs`. */
export async function registerOpenApi(app: Api, publicBaseUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: { title: 'Shopfloor API', version: '1.0.0', description: 'Factories, tasks, agent runs and webhooks' },
      servers: [{ url: publicBaseUrl }],
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
}
