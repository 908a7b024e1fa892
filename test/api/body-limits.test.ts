/**
 * Body limits per route: 1 MiB for the API, the large limits only where they are needed (worker
 * uploads, run creation with attachments); over a limit a 413 problem that names it. And JSON
 * routes take JSON only: a text/plain body is a 415, not a string for the schema to refuse.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectRefused, startTestApp, type TestApp } from '../helpers/app.js';

const MiB = 1024 * 1024;

let t: TestApp;
let agentKey: string;

beforeAll(async () => {
  t = await startTestApp();
  const agent = await t.call('POST', '/agent/identities', { name: 'Uploader' });
  agentKey = (await t.call('POST', `/agent/identities/${agent.json().uid}/api-keys`)).json().api_key;
});
afterAll(() => t.close());

/** A JSON object of exactly `size` bytes: `{"name":"xxx…"}`. */
const jsonOfSize = (size: number) => JSON.stringify({ name: 'x'.repeat(size - 11) });

/** An announced worker holding a fresh run, ready to upload. */
async function heldRun() {
  const worker = (await t.call('POST', '/agent/workers', { host: 'h' }, agentKey)).json().worker_id as string;
  const run = (await t.call('POST', '/agent/runs', { prompt: 'Upload something' })).json().run_id as string;
  for (;;) {
    const claimed = await t.call('POST', `/agent/workers/${worker}/claim`, undefined, agentKey);
    expect(claimed.statusCode, claimed.body).toBe(200);
    const { run_id, execution_id } = claimed.json().run;
    const headers = { 'x-execution-id': execution_id };
    for (const step of ['claim', 'start'])
      await t.call('POST', `/agent/workers/${worker}/runs/${run_id}/${step}`, undefined, agentKey, headers);
    if (run_id === run) return { url: `/api/v1/agent/workers/${worker}/runs/${run}`, headers };
  }
}

describe('body limits per route', () => {
  it('an API route takes 1 MiB; one byte more is a 413 naming the limit, and nothing is written', async () => {
    expect(jsonOfSize(MiB).length).toBe(MiB);
    // Within the limit the body reaches the schema (a name of a million characters is too long).
    expect((await t.call('POST', '/factory', jsonOfSize(MiB))).statusCode).toBe(400);
    const problem = await expectRefused(
      t,
      () => t.call('POST', '/factory', jsonOfSize(MiB + 1)),
      413,
      'payload_too_large',
    );
    expect(problem.detail).toBe('the body of POST /api/v1/factory is at most 1 MiB (1,048,576 bytes)');
    expect(problem.limit_bytes).toBe(MiB);
  });

  it('the JSON routes of workers take 1 MiB too, not the upload limit', async () => {
    const worker = (await t.call('POST', '/agent/workers', { host: 'h' }, agentKey)).json().worker_id;
    const big = JSON.stringify({ runs: [], acks: ['x'.repeat(2 * MiB)] });
    const problem = await expectRefused(
      t,
      () => t.call('POST', `/agent/workers/${worker}/heartbeat`, big, agentKey),
      413,
      'payload_too_large',
    );
    expect(problem.limit_bytes).toBe(MiB);
  });

  it('a worker uploads a file of several MiB (WORKER_UPLOAD_MAX_BYTES, 50 MiB by default)', async () => {
    const { url, headers } = await heldRun();
    const bytes = Buffer.alloc(6 * MiB, 7);
    const res = await t.app.inject({
      method: 'PUT',
      url: `${url}/files?filename=big.bin`,
      headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/octet-stream', ...headers },
      payload: bytes,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().size_bytes).toBe(6 * MiB);
  });

  it('a run is created with attachments of several MiB (its own limit, room for five of 10 MB)', async () => {
    const image = Buffer.alloc(3 * MiB, 1).toString('base64');
    const res = await t.call('POST', '/agent/runs', {
      prompt: 'Look at these',
      attachments: [{ file_name: 'a.png', mime_type: 'image/png', data: image }],
    });
    expect(res.statusCode, res.body).toBe(200);
  });
});

describe('media types', () => {
  it('a text/plain body on a JSON route is a 415, like any type no route parses', async () => {
    for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/xml']) {
      const problem = await expectRefused(
        t,
        () => t.call('POST', '/factory', '{"name":"x"}', undefined, { 'content-type': type }),
        415,
        'unsupported_media_type',
      );
      expect(problem.detail).toContain(type.split(';')[0]);
    }
  });
});
