/**
 * Every answer is typed: each operation of the OpenAPI document declares the body it answers
 * (so a client generator gets a type, not `unknown`), and in strict mode an answer with a field
 * its schema does not declare is a server error, so a schema cannot fall behind its route.
 */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileAnswerEncoder, encodeAnswer, responseSerializer } from '../../src/http/serializer.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

type Operation = { responses?: Record<string, { description?: string }> };

describe('the OpenAPI document', () => {
  it('declares a response body schema for every operation', async () => {
    const doc = (await t.call('GET', '/openapi.json')).json() as { paths: Record<string, Record<string, Operation>> };
    const undeclared = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, op]) => !Object.values(op.responses ?? {}).some((r) => r.description !== 'Default Response'))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(undeclared).toEqual([]);
  });

  it('describes every error as a problem document', async () => {
    const doc = (await t.call('GET', '/openapi.json')).json();
    expect(doc.components.schemas.Problem.required).toEqual(
      expect.arrayContaining(['type', 'title', 'status', 'detail', 'code']),
    );
    const factories = doc.paths['/api/v1/factory'].post.responses;
    expect(factories['4XX'].content['application/problem+json'].schema.$ref).toBe('#/components/schemas/Problem');
  });
});

describe('responseSerializer', () => {
  const answering = async (strict: boolean, body: unknown) => {
    const app = Fastify();
    app.setSerializerCompiler(responseSerializer(strict));
    app.get('/thing', { schema: { response: { 200: z.object({ id: z.string() }) } } }, async () => body);
    const res = await app.inject({ method: 'GET', url: '/thing' });
    await app.close();
    return res;
  };

  it('answers only the declared fields', async () => {
    const res = await answering(false, { id: 'a', secret_hash: 'x' });
    expect(res.json()).toEqual({ id: 'a' });
  });

  it('fails an answer with an undeclared field or a wrong type in strict mode; outside it, one that lacks a declared field', async () => {
    expect((await answering(true, { id: 'a', secret_hash: 'x' })).statusCode).toBe(500);
    expect((await answering(true, { id: 7 })).statusCode).toBe(500);
    expect((await answering(true, { id: 'a' })).json()).toEqual({ id: 'a' });
    expect((await answering(false, {})).statusCode).toBe(500);
    // Compiled (fast-json-stringify), a value is written as its declared type, as Fastify's own serializer does.
    expect((await answering(false, { id: 7 })).json()).toEqual({ id: '7' });
  });
});

describe('compileAnswerEncoder', () => {
  const item = z.object({
    uid: z.string(),
    note: z.string().nullable(),
    tag: z.string().optional(),
    data: z.record(z.string(), z.unknown()),
    nested: z.object({ n: z.number() }),
    list: z.array(z.object({ kind: z.enum(['a', 'b']) })),
  });

  it('writes the declared fields only, at every depth, and free-form records whole', () => {
    const encode = compileAnswerEncoder(item)!;
    const answer = {
      uid: 'u-1',
      note: null,
      data: { deep: { a: [1, { b: 'x' }] }, s: 'é"\n' },
      nested: { n: 2, secret: 's' },
      list: [{ kind: 'a', hash: 'h' }],
      key_hash: 'k',
    };
    expect(JSON.parse(encode(answer))).toEqual({
      uid: 'u-1',
      note: null,
      data: { deep: { a: [1, { b: 'x' }] }, s: 'é"\n' },
      nested: { n: 2 },
      list: [{ kind: 'a' }],
    });
    expect(JSON.parse(encode(answer))).toEqual(JSON.parse(encodeAnswer(item, answer, false)));
  });

  it('leaves a schema that changes values on their way out (a transform) to zod', () => {
    expect(compileAnswerEncoder(z.object({ at: z.date().transform((d) => d.toISOString()) }))).toBeNull();
    expect(compileAnswerEncoder(z.object({ n: z.string().transform((s) => s.length) }))).toBeNull();
  });
});
