/** Every error leaves as application/problem+json (RFC 9457) with a stable `code`. */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DomainError, type FieldError } from '../kernel/errors.js';
import { own } from '../own-keys.js';
import { redactUrl } from './redact-url.js';

const PROBLEM_TYPE_BASE = 'https://shopfloor.dev/problems/';

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: string;
  errors?: FieldError[];
  retryable?: boolean;
  [extension: string]: unknown;
}

/** The Problem of RFC 9457 with Shopfloor's members, for the OpenAPI document. */
export const problemSchema = z.object({
  type: z.url(),
  title: z.string(),
  status: z.int(),
  detail: z.string(),
  instance: z.string(),
  code: z.string().describe('A stable snake_case error code'),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  retryable: z.boolean().optional(),
});

/** The problem document, as JSON; `instance` is the request's path. */
export function problemJson(
  status: number,
  code: string,
  title: string,
  detail: string,
  instance: string,
  errors?: FieldError[],
  retryable?: boolean,
  extensions?: Record<string, unknown>,
): string {
  const problem: Problem = {
    type: PROBLEM_TYPE_BASE + code,
    title,
    status,
    detail,
    instance,
    code,
    ...(errors ? { errors } : {}),
    ...(retryable !== undefined ? { retryable } : {}),
    ...extensions,
  };
  return JSON.stringify(problem);
}

export function sendProblem(
  reply: FastifyReply,
  status: number,
  code: string,
  title: string,
  detail: string,
  errors?: FieldError[],
  retryable?: boolean,
  /** Members of this problem type beyond the common ones (RFC 9457 extensions). */
  extensions?: Record<string, unknown>,
): FastifyReply {
  const instance = redactUrl(reply.request.url);
  return reply
    .code(status)
    .type('application/problem+json')
    .send(problemJson(status, code, title, detail, instance, errors, retryable, extensions));
}

/**
 * Requests Fastify's router refuses before any route sees them: a malformed %-escape in the path,
 * a path parameter past its length. Fastify's own answers are not problem documents and repeat
 * the path whole, a url_token's token included.
 */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  if (error.code === 'FST_ERR_BAD_URL')
    return sendProblem(reply, 400, 'invalid_request', 'Invalid request', 'the path has a malformed %-escape');
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return sendProblem(reply, 414, 'uri_too_long', 'URI too long', 'a segment of the path is too long');
  reply.log.error({ err: error }, 'unexpected failure');
  return sendProblem(reply, 500, 'internal_error', 'Internal server error', 'The server failed to handle the request');
}

/** "1 MiB", "256 KiB", "74.7 MiB": how a limit is named in answers. */
export function formatBytes(n: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (n >= size) return `${Number((n / size).toFixed(1))} ${unit}`;
  }
  return `${n} bytes`;
}

/** Fastify's own client errors (body parsing, content type) keep their status. */
const FASTIFY_CLIENT_ERRORS: Record<string, [number, string, string]> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'invalid_json', 'Invalid JSON'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'invalid_json', 'Invalid JSON'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'invalid_request', 'Invalid request'],
};

export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof DomainError) {
    return sendProblem(
      reply,
      error.status,
      error.code,
      error.title,
      error.message,
      error.errors,
      error.retryable,
      error.extensions,
    );
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const errors = error.validation.map((v) => ({
      path: [error.validationContext, ...v.instancePath.split('/').filter(Boolean)].join('.'),
      message: v.message ?? 'invalid',
    }));
    return sendProblem(
      reply,
      400,
      'invalid_request',
      'Invalid request',
      'The request did not match the schema',
      errors,
    );
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    // The rest of the body is not read: the connection closes after the answer.
    const limit = request.routeOptions.bodyLimit;
    reply.header('connection', 'close');
    return sendProblem(
      reply,
      413,
      'payload_too_large',
      'Payload too large',
      `the body of ${request.method} ${request.routeOptions.url ?? redactUrl(request.url)} is at most ${formatBytes(limit)} (${limit.toLocaleString('en-US')} bytes)`,
      undefined,
      undefined,
      { limit_bytes: limit },
    );
  }
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    const type = String(request.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    return sendProblem(
      reply,
      415,
      'unsupported_media_type',
      'Unsupported media type',
      type ? `this route does not read a body of type ${type}` : 'a body needs a Content-Type',
    );
  }
  const known = error.code ? own(FASTIFY_CLIENT_ERRORS, error.code) : undefined;
  if (known) return sendProblem(reply, known[0], known[1], known[2], error.message);
  if (error instanceof SyntaxError || (error.statusCode && error.statusCode >= 400 && error.statusCode < 500)) {
    const status = error.statusCode ?? 400;
    return sendProblem(
      reply,
      status,
      status === 400 ? 'invalid_request' : 'client_error',
      'Invalid request',
      error.message,
    );
  }
  request.log.error({ err: error }, 'unexpected failure');
  return sendProblem(reply, 500, 'internal_error', 'Internal server error', 'The server failed to handle the request');
}
