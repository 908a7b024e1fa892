/**
 * Every answer is typed: each operation of the OpenAPI document declares the body it answers
 * (so a client generator gets a type, not `unknown`), and in strict mode an answer with a field
 * its schema does not declare is a server error, so a schema cannot fall behind its route.
 */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { responseSerializer } from '../../src/http/serializer.js';
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

  it('fails an answer with an undeclared field in strict mode, and one that breaks its schema always', async () => {
    expect((await answering(true, { id: 'a', secret_hash: 'x' })).statusCode).toBe(500);
    expect((await answering(false, { id: 7 })).statusCode).toBe(500);
    expect((await answering(true, { id: 'a' })).json()).toEqual({ id: 'a' });
  });
});
