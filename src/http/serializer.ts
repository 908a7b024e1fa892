/**
 * Answers leave through their route's response schema, so an answer holds exactly the fields its
 * schema declares. With `strict` (tests, RESPONSE_SCHEMAS=strict), each is encoded by its zod
 * schema and checked: a field the schema does not declare, or a value that breaks it, is a
 * server error, so no schema can fall behind its route. Otherwise (what ships) each schema is
 * compiled once into a fast-json-stringify serializer from its JSON Schema, which writes the
 * declared fields only and skips the encode: 1.3-2.6 times faster on the answers of runs and tasks
 * (bench/workloads/33-serialize.ts); a schema JSON Schema cannot express (transforms, codecs)
 * keeps the zod encoder.
 */
import fastJson from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import { z } from 'zod';
import { own, ownsKey } from '../own-keys.js';

/** Paths of fields `raw` has and `kept` lost: the fields a schema dropped. */
function dropped(raw: unknown, kept: unknown, at = ''): string[] {
  if (Array.isArray(raw) && Array.isArray(kept)) return raw.flatMap((v, i) => dropped(v, kept[i], `${at}[${i}]`));
  if (!raw || typeof raw !== 'object' || !kept || typeof kept !== 'object' || Array.isArray(raw)) return [];
  return Object.entries(raw).flatMap(([key, value]) =>
    ownsKey(kept, key) ? dropped(value, own(kept as Record<string, unknown>, key), `${at}.${key}`) : [`${at}.${key}`],
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

/**
 * `schema` compiled to a fast-json-stringify serializer, or null when its JSON Schema cannot say
 * what it encodes (a transform, a codec, a date) or fast-json-stringify refuses it.
 */
export function compileAnswerEncoder(schema: z.ZodType): ((data: unknown) => string) | null {
  try {
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw', cycles: 'ref', reused: 'inline' });
    // Output and input alike: nothing in the schema changes a value on its way out.
    const output = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'throw', cycles: 'ref', reused: 'inline' });
    if (JSON.stringify(stripDefaults(json)) !== JSON.stringify(stripDefaults(output))) return null;
    const { $schema: _draft, ...rest } = output as Record<string, unknown>;
    return fastJson(rest as unknown as Parameters<typeof fastJson>[0]) as (data: unknown) => string;
  } catch {
    return null;
  }
}

/**
 * A JSON Schema without what tells an input from an output of the same shape: `default`s and the
 * `required` lists they change (an input may omit a defaulted field), and closed objects.
 */
function stripDefaults(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripDefaults);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => key !== 'default' && key !== 'required' && key !== 'additionalProperties')
      .map(([key, value]) => [key, stripDefaults(value)]),
  );
}

export const responseSerializer =
  (strict: boolean): FastifySerializerCompiler<z.ZodType> =>
  ({ schema, method, url }) => {
    const fast = strict ? null : compileAnswerEncoder(schema);
    return fast ?? ((data) => encodeAnswer(schema, data, strict, method, url));
  };
