/**
 * Answers leave through their route's response schema (zod): encoded by it, so an answer holds
 * exactly the fields its schema declares, and an answer that breaks its schema is a server
 * error, not a surprise for a client. With `strict` (tests, RESPONSE_SCHEMAS=strict), an answer
 * with a field its schema does not declare fails too, so no schema can fall behind its route.
 */
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import type { z } from 'zod';

/** Paths of fields `raw` has and `kept` lost: the fields a schema dropped. */
function dropped(raw: unknown, kept: unknown, at = ''): string[] {
  if (Array.isArray(raw) && Array.isArray(kept)) return raw.flatMap((v, i) => dropped(v, kept[i], `${at}[${i}]`));
  if (!raw || typeof raw !== 'object' || !kept || typeof kept !== 'object' || Array.isArray(raw)) return [];
  return Object.entries(raw).flatMap(([key, value]) =>
    key in kept ? dropped(value, (kept as Record<string, unknown>)[key], `${at}.${key}`) : [`${at}.${key}`],
  );
}

class ResponseSchemaMismatch extends Error {
  constructor(method: string, url: string, detail: string) {
    super(`the answer of ${method} ${url} does not match its response schema: ${detail}`);
    this.name = 'ResponseSchemaMismatch';
  }
}

/**
 * `data` as JSON, encoded by `schema` as a route's answer is. For answers a route keeps made (a
 * cache of costly answers sends the JSON again, as a string, which Fastify sends as it is).
 */
export function encodeAnswer(schema: z.ZodType, data: unknown, strict: boolean, method = '', url = ''): string {
  const result = schema.safeEncode(data);
  if (!result.success) throw new ResponseSchemaMismatch(method, url, result.error.message);
  if (strict) {
    const lost = dropped(JSON.parse(JSON.stringify(data)), result.data);
    if (lost.length) throw new ResponseSchemaMismatch(method, url, `undeclared ${lost.slice(0, 5).join(', ')}`);
  }
  return JSON.stringify(result.data);
}

export const responseSerializer =
  (strict: boolean): FastifySerializerCompiler<z.ZodType> =>
  ({ schema, method, url }) =>
  (data) =>
    encodeAnswer(schema, data, strict, method, url);
