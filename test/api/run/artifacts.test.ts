import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v4 as uuidv4 } from 'uuid';
import { ADMIN_KEY, expectProblem, startTestApp, type TestApp } from '../../helpers/app.js';
import {
  addArtifact,
  type Held,
  newRun,
  outsiderKey,
  signedPath,
  startRun,
  teammateKey,
} from '../../helpers/conversation-fixtures.js';

let t: TestApp;
let outsider: string;
let teammate: string;
let run: { run_id: string; conversation_id: string };
let held: Held;
let blob: string;
const ids = {
  privateFile: uuidv4(),
  publicFile: uuidv4(),
  plan: uuidv4(),
  filePlan: uuidv4(),
  pr: uuidv4(),
  personal: uuidv4(),
};

beforeAll(async () => {
  t = await startTestApp();
  outsider = await outsiderKey(t);
  teammate = await teammateKey(t);
  run = await newRun(t);
  held = await startRun(t, run.run_id);
  blob = await t.rt.blobs.put(Buffer.from('report body'));
  const file = {
    artifact_type: 'FILE',
    filename: 'report.txt',
    filepath: 'out/report.txt',
    mime_type: 'text/plain',
    size_bytes: 11,
    description: 'The report',
    blob,
  } as const;
  await addArtifact(t, run.run_id, held, { artifact_uid: ids.privateFile, public: false, ...file });
  await addArtifact(t, run.run_id, held, { artifact_uid: ids.publicFile, public: true, ...file });
  await addArtifact(t, run.run_id, held, {
    artifact_uid: ids.plan,
    artifact_type: 'PLAN',
    public: false,
    document_uid: 'doc-1',
    title: 'Plan',
    content: '# Plan\n\n1. Fix',
  });
  await addArtifact(t, run.run_id, held, {
    artifact_uid: ids.filePlan,
    artifact_type: 'PLAN',
    public: false,
    document_uid: 'doc-2',
    blob: await t.rt.blobs.put(Buffer.from('# Stored plan')),
  });
  await addArtifact(t, run.run_id, held, {
    artifact_uid: ids.pr,
    artifact_type: 'PULL_REQUEST',
    public: false,
    url: 'https://github.com/acme/app/pull/7',
    branch: 'fix-build',
  });
  const personal = await newRun(t, { team: false });
  await addArtifact(t, personal.run_id, await startRun(t, personal.run_id), {
    artifact_uid: ids.personal,
    artifact_type: 'FILE',
    public: false,
    filename: 'mine.txt',
    mime_type: 'text/plain',
    blob,
  });
});
afterAll(() => t.close());

const get = (uid: string, key: string | null = ADMIN_KEY, suffix = '') =>
  t.call('GET', `/agent/artifacts/${uid}${suffix}`, undefined, key);

describe('GET /agent/artifacts/{uid}', () => {
  it('gives a file a signed download URL with its type, name and fields', async () => {
    const res = await get(ids.privateFile);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      artifact_uid: ids.privateFile,
      artifact_type: 'FILE',
      created_at: expect.any(String),
      data: {
        download_url: expect.stringContaining(`/api/v1/blobs/${blob}?filename=report.txt&mime=text/plain&expires=`),
        expires_at: expect.any(String),
        content_type: 'text/plain',
        filename: 'report.txt',
        filepath: 'out/report.txt',
        size_bytes: 11,
        description: 'The report',
      },
    });
    expect(signedPath(t, body.data.download_url)).toMatchObject({ blob, filename: 'report.txt', mime: 'text/plain' });
    expect(Date.parse(body.data.expires_at) - Date.now()).toBeGreaterThan(60_000);
  });

  it('serves a public artifact without a credential, without its filepath', async () => {
    const res = await get(ids.publicFile, null);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ filename: 'report.txt', content_type: 'text/plain' });
    expect(res.json().data.filepath).toBeUndefined();
    expect((await get(ids.publicFile, outsider)).statusCode).toBe(200);
  });

  it('gives a plan its markdown content inline, from the artifact or its stored file', async () => {
    expect((await get(ids.plan)).json()).toMatchObject({
      artifact_type: 'PLAN',
      data: { content: '# Plan\n\n1. Fix', content_type: 'text/markdown', document_uid: 'doc-1', title: 'Plan' },
    });
    expect((await get(ids.filePlan)).json().data).toMatchObject({
      content: '# Stored plan',
      content_type: 'text/markdown',
    });
  });

  it('gives a pull request its fields', async () => {
    expect((await get(ids.pr)).json()).toMatchObject({
      artifact_type: 'PULL_REQUEST',
      data: { url: 'https://github.com/acme/app/pull/7', branch: 'fix-build' },
    });
  });

  it('needs a valid credential for a private artifact (401), and view access to its run (404)', async () => {
    expectProblem(await get(ids.privateFile, null), 401, 'authentication_required');
    expectProblem(await get(ids.privateFile, 'sf_not_a_key'), 401);
    expectProblem(await get(ids.privateFile, outsider), 404, 'resource_not_found');
    expect((await get(ids.privateFile, teammate)).statusCode).toBe(200);
    expectProblem(await get(ids.personal, teammate), 404);
    expect((await get(ids.personal)).statusCode).toBe(200);
    // Unknown: 401 without a credential (as any private artifact), 404 with one.
    expectProblem(await get(uuidv4(), null), 401);
    expectProblem(await get(uuidv4()), 404);
    expectProblem(await get(`run:${run.run_id}`), 404);
  });
});

describe('GET /agent/artifacts/{uid}/download', () => {
  it('redirects to the signed URL of the file, anonymously for a public artifact', async () => {
    const res = await get(ids.privateFile, ADMIN_KEY, '/download');
    expect(res.statusCode, res.body).toBe(302);
    expect(signedPath(t, res.headers.location as string)).toMatchObject({ blob, filename: 'report.txt' });
    const anonymous = await get(ids.publicFile, null, '/download');
    expect(anonymous.statusCode).toBe(302);
    expectProblem(await get(ids.privateFile, null, '/download'), 401);
    expectProblem(await get(ids.privateFile, outsider, '/download'), 404);
  });

  it('turns a plan into a markdown file, and has nothing to download for a pull request', async () => {
    const res = await get(ids.plan, ADMIN_KEY, '/download');
    expect(res.statusCode).toBe(302);
    const link = signedPath(t, res.headers.location as string);
    expect(link).toMatchObject({ filename: `${ids.plan}.md`, mime: 'text/markdown' });
    expect((await t.rt.blobs.read(link.blob))!.toString('utf8')).toBe('# Plan\n\n1. Fix');
    expectProblem(await get(ids.pr, ADMIN_KEY, '/download'), 422, 'operation_not_supported');
  });
});
