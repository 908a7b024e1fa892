/**
 * GET /factory-files/schemas… (public, ETag and If-None-Match) and POST /factory-files/validate:
 * what is served is what validates, and validating writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { expectProblem, startTestApp, type TestApp } from '../../helpers/app.js';
import { asList, edit, fixture } from '../../helpers/factory-files.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const DOCUMENTS = [
  'common.schema.json',
  'factory.schema.json',
  'agent.schema.json',
  'automation.schema.json',
  'runner.schema.json',
  'scorer.schema.json',
];

describe('the schema documents', () => {
  it('lists the versions, each with its bundle, with no credential', async () => {
    const res = await t.call('GET', '/factory-files/schemas', undefined, null);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      current_version: 'v1alpha1',
      versions: [
        {
          schema_version: 'v1alpha1',
          schema_url: expect.stringMatching(/\/api\/v1\/factory-files\/schemas\/v1alpha1$/),
        },
      ],
    });
    expect(res.headers.etag).toMatch(/^"[\w-]+"$/);
  });

  it('answers 304 with no body to If-None-Match with the current ETag, on each of the three routes', async () => {
    for (const url of [
      '/factory-files/schemas',
      '/factory-files/schemas/v1alpha1',
      '/factory-files/schemas/v1alpha1/agent.schema.json',
    ]) {
      const first = await t.call('GET', url, undefined, null);
      expect(first.statusCode).toBe(200);
      const again = await t.call('GET', url, undefined, null, { 'if-none-match': first.headers.etag as string });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(first.headers.etag);
      const weak = await t.call('GET', url, undefined, null, { 'if-none-match': `"other", W/${first.headers.etag}` });
      expect(weak.statusCode).toBe(304);
      const stale = await t.call('GET', url, undefined, null, { 'if-none-match': '"stale"' });
      expect(stale.statusCode).toBe(200);
    }
  });

  it('bundles the six JSON Schema 2020-12 documents, whose relative $refs resolve among themselves', async () => {
    const res = await t.call('GET', '/factory-files/schemas/v1alpha1', undefined, null);
    const { schema_version, documents } = res.json();
    expect(schema_version).toBe('v1alpha1');
    expect(Object.keys(documents).sort()).toEqual([...DOCUMENTS].sort());
    // A standard validator given the bundle as served validates the example as the server does.
    const ajv = new Ajv2020({ strict: false });
    for (const doc of Object.values(documents)) ajv.addSchema(doc as object);
    for (const name of DOCUMENTS) {
      expect(documents[name].$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(documents[name].$id).toBe(name);
    }
    const example = fixture('sdlc-issue-to-pr');
    expect(ajv.validate('factory.schema.json', parse(example['factory.yaml']!))).toBe(true);
    expect(ajv.validate('runner.schema.json', parse(example['runners/macos-build.yaml']!))).toBe(true);
    expect(
      ajv.validate('runner.schema.json', { platform: { os: 'macos' }, instanceShape: { vcpus: 6, memoryGb: 16 } }),
    ).toBe(false);
    expect(ajv.validate('factory.schema.json', { ...parse(example['factory.yaml']!), schemaVersion: 'v2' })).toBe(
      false,
    );
  });

  it('serves each document alone, as in the bundle', async () => {
    const bundle = (await t.call('GET', '/factory-files/schemas/v1alpha1', undefined, null)).json().documents;
    for (const name of DOCUMENTS) {
      const res = await t.call('GET', `/factory-files/schemas/v1alpha1/${name}`, undefined, null);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(bundle[name]);
    }
  });

  it('answers 404 for an unknown version or document', async () => {
    expectProblem(await t.call('GET', '/factory-files/schemas/v2', undefined, null), 404, 'resource_not_found');
    expectProblem(await t.call('GET', '/factory-files/schemas/v1alpha1/webhook.schema.json', undefined, null), 404);
    expectProblem(await t.call('GET', '/factory-files/schemas/v2/agent.schema.json', undefined, null), 404);
  });
});

describe('POST /factory-files/validate', () => {
  it('finds the example valid, lists what only an apply checks, and writes nothing', async () => {
    const before = await t.head();
    const res = await t.call('POST', '/factory-files/validate', { files: asList(fixture('sdlc-issue-to-pr')) }, null);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      valid: true,
      schema_version: 'v1alpha1',
      diagnostics: [],
      deferred_resolutions: [],
      state_dependent_checks_not_run: ['model_ids', 'environment_ids', 'secret_names', 'webhook_uids'],
      validation_scope: { parser: 'checked', state_independent: 'checked', state_dependent: 'not_checked' },
    });
    expect(res.json().state_dependent_references).toContainEqual({
      kind: 'model_id',
      value: 'claude-4-5-haiku',
      path: 'scorers/task-compliance/scorer.md',
      field: 'model',
      line: 17,
      column: 8,
    });
    expect(await t.head()).toBe(before);
  });

  it('answers the diagnostics of invalid files with 200: the request was fine, the files are not', async () => {
    const files = edit(fixture('sdlc-issue-to-pr'), 'factory.yaml', 'alias: Acme', 'alias: !!str Acme');
    const res = await t.call('POST', '/factory-files/validate', { files: asList(files) }, null);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      valid: false,
      diagnostics: [{ code: 'FF_TAG', path: 'factory.yaml', line: 7, column: 8, message: expect.any(String) }],
      state_dependent_checks_not_run: ['model_ids', 'environment_ids', 'secret_names', 'webhook_uids'],
      state_dependent_references: [],
    });
    // A version this server does not know is echoed back, and only the layout is checked.
    const v2 = edit(fixture('sdlc-issue-to-pr'), 'factory.yaml', 'schemaVersion: v1alpha1', 'schemaVersion: v2');
    expect((await t.call('POST', '/factory-files/validate', { files: asList(v2) }, null)).json()).toMatchObject({
      valid: false,
      schema_version: 'v2',
      diagnostics: [{ code: 'FF_UNSUPPORTED_VERSION', line: 2, column: 16 }],
      validation_scope: { parser: 'checked', state_independent: 'not_run' },
    });
  });

  it('refuses a malformed request with a 400 naming the field, and writes nothing', async () => {
    const bad = async (body: unknown, field: RegExp) => {
      const before = await t.head();
      const problem = expectProblem(await t.call('POST', '/factory-files/validate', body, null), 400);
      expect(problem.errors.map((e: { path: string }) => e.path).join(' ')).toMatch(field);
      expect(await t.head()).toBe(before);
    };
    await bad({ files: [{ path: '../factory.yaml', content: '' }] }, /body\.files\.0\.path/);
    await bad({ files: [{ path: '/etc/passwd', content: '' }] }, /body\.files\.0\.path/);
    await bad(
      {
        files: [
          { path: 'agents/a/agent.md', content: 'x' },
          { path: 'agents/a/agent.md', content: 'y' },
        ],
      },
      /body\.files\.1\.path/,
    );
    await bad(
      { files: Array.from({ length: 257 }, (_, i) => ({ path: `skills/s/f${i}`, content: '' })) },
      /body\.files/,
    );
    await bad(
      { files: [{ path: 'factory.yaml', content: 'x'.repeat(2 * 1024 * 1024 + 1) }] },
      /body\.files\.0\.content/,
    );
    await bad({ files: [], extra: true }, /body/);
  });
});
