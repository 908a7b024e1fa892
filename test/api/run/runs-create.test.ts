import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RUN_DEPTH } from '../../../commands/run/create.js';
import { expectProblem, expectRefused, newEnvironment, startTestApp, type TestApp } from '../../helpers/app.js';
import { outsiderKey } from '../../helpers/conversation-fixtures.js';

let t: TestApp;
let outsider: string;
beforeAll(async () => {
  t = await startTestApp();
  outsider = await outsiderKey(t);
});
afterAll(() => t.close());

const PNG = Buffer.from('89504e470d0a1a0a', 'hex').toString('base64');
const image = (fields: Record<string, unknown> = {}) => ({
  file_name: 'shot.png',
  mime_type: 'image/png',
  data: PNG,
  ...fields,
});
const create = (body: unknown, key?: string) => t.call('POST', '/agent/runs', body, key);
const refused = (body: unknown, status = 400, code?: string) => expectRefused(t, () => create(body), status, code);

describe('POST /agent/runs', () => {
  it('queues a run in a new conversation and answers 200 with its ids and state', async () => {
    const res = await create({ prompt: 'Fix the flaky test\nin CI', metadata: { ticket_id: 'VIS-1' } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      run_id: expect.any(String),
      task_id: body.run_id,
      state: 'QUEUED',
      conversation_id: expect.any(String),
    });
    const run = (await t.call('GET', `/agent/runs/${body.run_id}`)).json();
    expect(run).toMatchObject({
      run_id: body.run_id,
      title: 'Fix the flaky test',
      prompt: 'Fix the flaky test\nin CI',
      state: 'QUEUED',
      source: 'API',
      conversation_id: body.conversation_id,
      root_run_id: body.run_id,
      scope: { type: 'Team', uid: t.teamUid },
      creator: { type: 'user', uid: t.adminUid },
      metadata: { ticket_id: 'VIS-1' },
    });
  });

  it('answers the same on the older alias POST /agent/run', async () => {
    const res = await t.call('POST', '/agent/run', { prompt: 'Old clients', title: 'Legacy' });
    expect(res.statusCode, res.body).toBe(200);
    expect((await t.call('GET', `/agent/runs/${res.json().run_id}`)).json()).toMatchObject({
      title: 'Legacy',
      state: 'QUEUED',
    });
  });

  it('continues a conversation, makes a personal run with team: false, and runs a skill without a prompt', async () => {
    const first = (await create({ prompt: 'Start' })).json();
    const next = (await create({ conversation_id: first.conversation_id })).json();
    expect(next.conversation_id).toBe(first.conversation_id);
    const personal = (await create({ prompt: 'Mine only', team: false })).json();
    expect((await t.call('GET', `/agent/runs/${personal.run_id}`)).json().scope).toEqual({
      type: 'User',
      uid: t.adminUid,
    });
    const skilled = (await create({ skill: 'acme/tools:skills/lint/SKILL.md' })).json();
    expect((await t.call('GET', `/agent/runs/${skilled.run_id}`)).json()).toMatchObject({
      agent_skill: { name: 'lint', full_path: 'skills/lint/SKILL.md' },
      agent_config: { name: 'lint', skill_spec: 'acme/tools:skills/lint/SKILL.md' },
    });
  });

  it('accepts every limit at its edge', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`key.${i}-x_y`, `v${i}`]));
    metadata['k'.repeat(64)] = 'é'.repeat(128); // 256 bytes of UTF-8
    delete metadata['key.0-x_y'];
    const res = await create({
      prompt: 'Edges',
      metadata,
      attachments: Array.from({ length: 5 }, () => image()),
      config: { environment_id: await newEnvironment(t) },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(Object.keys((await t.call('GET', `/agent/runs/${res.json().run_id}`)).json().metadata)).toHaveLength(20);
  });

  it('refuses bad metadata without writing', async () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
    await refused({ prompt: 'x', metadata: keys(21) });
    await refused({ prompt: 'x', metadata: { 'bad key': 'v' } });
    await refused({ prompt: 'x', metadata: { 'bad/key': 'v' } });
    await refused({ prompt: 'x', metadata: { '': 'v' } });
    await refused({ prompt: 'x', metadata: { ['k'.repeat(65)]: 'v' } });
    await refused({ prompt: 'x', metadata: { k: 'v'.repeat(257) } });
    await refused({ prompt: 'x', metadata: { k: 'é'.repeat(129) } });
    await refused({ prompt: 'x', metadata: { k: 'a\u0000b' } });
    await refused({ prompt: 'x', metadata: { k: 1 } });
  });

  it('refuses bad attachments without writing', async () => {
    await refused({ prompt: 'x', attachments: Array.from({ length: 6 }, () => image()) });
    await refused({ prompt: 'x', attachments: [image({ mime_type: 'application/pdf' })] });
    await refused({ prompt: 'x', attachments: [image({ data: 'not base64!' })] });
    await refused({ prompt: 'x', attachments: [image({ file_name: '' })] });
  });

  it('refuses a bad config or body without writing', async () => {
    await refused({ prompt: 'x', config: { skill_spec: 'acme/a:SKILL.md', skills: ['acme/b:SKILL.md'] } });
    await refused({ prompt: 'x', config: { environment_id: 'A'.repeat(21) } });
    await refused({ prompt: 'x', config: { environment_id: 'A'.repeat(23) } });
    await refused({ prompt: 'x', config: { environment_id: `${'A'.repeat(21)}-` } });
    await refused({ prompt: 'x', mode: 'yolo' });
    await refused({ prompt: 'x', surprise: true });
    await refused({ prompt: '   ' });
    await refused({});
    await refused({ prompt: 'x', team: false, agent_identity_uid: 'a-1' });
    await refused({ prompt: 'x', agent_identity_uid: 'no-such-agent' });
  });

  it('refuses on_behalf_of from a user key with 403', async () => {
    await refused({ prompt: 'x', on_behalf_of: 'someone@example.com' }, 403);
  });

  it('refuses an unknown or invisible parent with 400, and an unknown or invisible conversation with 404', async () => {
    await refused({ prompt: 'x', parent_run_id: 'no-such-run' }, 400);
    const mine = (await create({ prompt: 'Team run' })).json();
    await expectRefused(t, () => create({ prompt: 'x', parent_run_id: mine.run_id }, outsider), 400);
    await refused({ prompt: 'x', conversation_id: 'no-such-conversation' }, 404, 'resource_not_found');
    await expectRefused(t, () => create({ conversation_id: mine.conversation_id }, outsider), 404);
  });

  it(`nests runs ${MAX_RUN_DEPTH} levels below a root and no deeper; children inherit metadata`, async () => {
    let parent = (await create({ prompt: 'root', metadata: { origin: 'root', keep: 'yes' } })).json().run_id as string;
    const root = parent;
    for (let depth = 1; depth <= MAX_RUN_DEPTH; depth++) {
      const res = await create({
        prompt: `level ${depth}`,
        parent_run_id: parent,
        metadata: { origin: `level ${depth}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      parent = res.json().run_id;
    }
    const deepest = (await t.call('GET', `/agent/runs/${parent}`)).json();
    expect(deepest).toMatchObject({ root_run_id: root, metadata: { origin: `level ${MAX_RUN_DEPTH}`, keep: 'yes' } });
    const body = await refused({ prompt: 'too deep', parent_run_id: parent });
    expect(body.errors).toEqual([{ path: 'body.parent_run_id', message: expect.stringMatching(/at most/) }]);
  });

  it('needs a credential', async () => {
    expectProblem(await t.call('POST', '/agent/runs', { prompt: 'x' }, null), 401);
  });
});
