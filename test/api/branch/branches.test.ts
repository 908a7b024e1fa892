/**
 * Factory branches: proposed definitions (POST, PUT files, GET, DELETE) and their apply, one
 * definition version of the factory: whole or not at all, idempotent by content, never reviving
 * a retired agent, never changing the settings of runs that exist.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from '../../e2e/server-process.js';
import { ADMIN_KEY, expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';
import { asList, edit, type Files, fixture, variant } from '../../helpers/factory-files.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const small = fixture('small');
const newFactory = async (name = 'Payments') => {
  const res = await t.call('POST', '/factory', { name });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().uid as string;
};
const propose = async (factory: string, name: string, files: Files, key = ADMIN_KEY) => {
  const res = await t.call('POST', `/factory/${factory}/branches`, { name, files: asList(files) }, key);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
};
const apply = async (factory: string, branch: string) => {
  const res = await t.call('POST', `/factory/${factory}/branches/${branch}/apply`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
type Agent = {
  uid: string;
  name: string;
  base_model: string | null;
  agent_type: string;
  prompt: string | null;
  default_runner_uid: string | null;
};
const agentsOf = async (factory: string) =>
  Object.fromEntries(
    ((await t.call('GET', `/agent/identities?factory_uid=${factory}`)).json().agents as Agent[]).map((a) => [
      a.name,
      a,
    ]),
  ) as Record<
    string,
    {
      uid: string;
      base_model: string | null;
      agent_type: string;
      prompt: string | null;
      default_runner_uid: string | null;
    }
  >;
const automationsOf = async (factory: string) =>
  (await t.call('GET', `/factory/${factory}/automations`)).json().automations as Array<{ id: string; name: string }>;

const NO_CHANGES = { added: [], changed: [], retired: [] };

describe('proposing a definition', () => {
  it('creates a branch with its validation and what applying it would change; reading it changes nothing', async () => {
    const factory = await newFactory();
    const branch = await propose(factory, 'main', small);
    expect(branch).toMatchObject({
      factory_uid: factory,
      name: 'main',
      status: 'OPEN',
      freshness: 'CURRENT',
      valid: true,
      schema_version: 'v1alpha1',
      diagnostics: [],
      diagnostic_count: 0,
      base_version: 0,
      live_version: 0,
      last_applied: null,
      proposed_by: { type: 'user' },
      deleted_at: null,
      changes: {
        agents: { added: ['foreman', 'reviewer'], changed: [], retired: [] },
        automations: { added: ['nightly-review'], changed: [], retired: [] },
        runners: { added: ['linux-standard'], changed: [], retired: [] },
        webhooks: NO_CHANGES,
        scorers: NO_CHANGES,
        factory: { changed: true },
      },
    });
    expect(branch.files.map((f: { path: string }) => f.path)).toEqual(Object.keys(small).sort());
    const before = await t.head();
    const read = await t.call('GET', `/factory/${factory}/branches/${branch.uid}`);
    expect(read.json()).toEqual(branch);
    expect(await t.head()).toBe(before);
    // Proposing applies nothing.
    expect(await agentsOf(factory)).toEqual({});
    expect((await t.call('GET', `/factory/${factory}`)).json().definition).toBeNull();
  });

  it('keeps an invalid proposal, with its diagnostics and no changes', async () => {
    const factory = await newFactory();
    const broken = edit(small, 'agents/reviewer/agent.md', 'agentType: REVIEW', 'agentType: REVIEWER');
    const branch = await propose(factory, 'wip', broken);
    expect(branch).toMatchObject({
      valid: false,
      changes: null,
      diagnostic_count: 1,
      diagnostics: [{ code: 'FF_INVALID_REFERENCE', path: 'agents/reviewer/agent.md', line: 3, column: 12 }],
    });
  });

  it('replaces the files of a branch (PUT), and again the same files write nothing', async () => {
    const factory = await newFactory();
    const branch = await propose(factory, 'main', small);
    const next = edit(small, 'factory.yaml', 'alias: Pay', 'alias: Payments');
    const res = await t.call('PUT', `/factory/${factory}/branches/${branch.uid}/files`, { files: asList(next) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().content_hash).not.toBe(branch.content_hash);
    const before = await t.head();
    const again = await t.call('PUT', `/factory/${factory}/branches/${branch.uid}/files`, { files: asList(next) });
    expect(again.json()).toEqual(res.json());
    expect(await t.head()).toBe(before);
  });

  it('keeps one live branch per name, lists them by name, and frees the name when retired', async () => {
    const factory = await newFactory();
    const main = await propose(factory, 'main', small);
    await propose(factory, 'feature/reviews', small);
    const taken = await expectRefused(
      t,
      () => t.call('POST', `/factory/${factory}/branches`, { name: 'main', files: asList(small) }),
      409,
      'branch_name_taken',
    );
    expect(taken.detail).toContain(main.uid);
    const list = (await t.call('GET', `/factory/${factory}/branches`)).json();
    expect(list.branches.map((b: { name: string }) => b.name)).toEqual(['feature/reviews', 'main']);
    expect(
      (await t.call('GET', `/factory/${factory}/branches?name=main`))
        .json()
        .branches.map((b: { uid: string }) => b.uid),
    ).toEqual([main.uid]);
    expect((await t.call('DELETE', `/factory/${factory}/branches/${main.uid}`)).statusCode).toBe(204);
    const again = await propose(factory, 'main', small);
    expect(again.uid).not.toBe(main.uid);
  });

  it('refuses bad input with a 400 naming the field, writing nothing', async () => {
    const factory = await newFactory();
    const post = (body: unknown) => () => t.call('POST', `/factory/${factory}/branches`, body);
    for (const name of ['', '-x', 'a..b', 'a//b', 'x'.repeat(101), 'with space'])
      await expectRefused(t, post({ name, files: [] }), 400);
    await expectRefused(t, post({ name: 'ok', files: [{ path: 'a/../b', content: '' }] }), 400);
    await expectRefused(t, post({ name: 'ok' }), 400);
    await expectRefused(t, post({ name: 'ok', files: [], sha: 'abc' }), 400);
  });
});

describe('retiring a branch', () => {
  it('answers 204, again 204; reads report DELETED; apply and PUT are conflicts', async () => {
    const factory = await newFactory();
    const branch = await propose(factory, 'main', small);
    const url = `/factory/${factory}/branches/${branch.uid}`;
    expect((await t.call('DELETE', url)).statusCode).toBe(204);
    const before = await t.head();
    expect((await t.call('DELETE', url)).statusCode).toBe(204);
    expect(await t.head()).toBe(before);
    expect((await t.call('GET', url)).json()).toMatchObject({
      status: 'DELETED',
      freshness: 'UNKNOWN',
      changes: null,
      deleted_at: expect.any(String),
    });
    await expectRefused(t, () => t.call('POST', `${url}/apply`), 409, 'branch_deleted');
    await expectRefused(t, () => t.call('PUT', `${url}/files`, { files: asList(small) }), 409, 'branch_deleted');
    // The live branches no longer list it.
    expect((await t.call('GET', `/factory/${factory}/branches`)).json().branches).toEqual([]);
  });

  it('answers 404 for a branch of another factory, or of a factory of another team', async () => {
    const factory = await newFactory();
    const other = await newFactory('Other');
    const branch = await propose(factory, 'main', small);
    expectProblem(await t.call('GET', `/factory/${other}/branches/${branch.uid}`), 404);
    await expectRefused(t, () => t.call('DELETE', `/factory/${other}/branches/${branch.uid}`), 404);
    await expectRefused(t, () => t.call('POST', `/factory/${other}/branches/${branch.uid}/apply`), 404);
    const team = (await t.call('POST', '/teams', { name: 'Elsewhere' })).json().uid;
    const stranger = await t.addMember(team, { email: `stranger-${factory}@example.com` });
    expectProblem(await t.call('GET', `/factory/${factory}/branches/${branch.uid}`, undefined, stranger.api_key), 404);
    await expectRefused(
      t,
      () => t.call('POST', `/factory/${factory}/branches`, { name: 'x', files: [] }, stranger.api_key),
      404,
    );
  });
});

describe('who may do what', () => {
  it('lets an agent of the team propose, but only users apply or retire', async () => {
    const factory = await newFactory();
    const agent = (await t.call('POST', '/agent/identities', { name: 'Proposer' })).json();
    const key = (await t.call('POST', `/agent/identities/${agent.uid}/api-keys`)).json().api_key;
    const branch = await propose(factory, 'agent-proposal', small, key);
    expect(branch.proposed_by).toEqual({ type: 'agent', uid: agent.uid });
    await expectRefused(
      t,
      () => t.call('POST', `/factory/${factory}/branches/${branch.uid}/apply`, undefined, key),
      403,
    );
    await expectRefused(t, () => t.call('DELETE', `/factory/${factory}/branches/${branch.uid}`, undefined, key), 403);
  });
});

describe('applying a branch', () => {
  it("applies a definition; a second branch changes an agent's model and retires an automation: the changes show, earlier runs keep their settings", async () => {
    const factory = await newFactory();
    const first = await propose(factory, 'main', small);
    const applied = await apply(factory, first.uid);
    expect(applied).toMatchObject({
      status: 'APPLIED',
      freshness: 'CURRENT',
      live_version: 1,
      last_applied: { version: 1 },
    });
    const v1 = await agentsOf(factory);
    expect(v1.reviewer).toMatchObject({
      agent_type: 'REVIEW',
      base_model: 'gpt-5-4-high',
      prompt: 'Review every pull request of the payments service.',
    });
    expect(v1.foreman).toMatchObject({ agent_type: 'FOREMAN', base_model: 'claude-4-6-sonnet' });
    expect((await automationsOf(factory)).map((a) => a.name)).toEqual(['nightly-review']);
    expect((await t.call('GET', `/factory/${factory}`)).json()).toMatchObject({
      name: 'Payments',
      alias: 'Pay',
      repositories: [{ owner: 'acme', repo: 'payments' }],
      foreman_agent_uid: v1.foreman!.uid,
      definition: { version: 1, state: 'applied', branch_uid: first.uid },
    });
    // A run of the reviewer takes the reviewer's model as it stands.
    const run = await t.call('POST', '/agent/runs', { prompt: 'review #12', agent_identity_uid: v1.reviewer!.uid });
    expect(run.statusCode, run.body).toBe(200);
    const runUrl = `/agent/runs/${run.json().run_id}`;
    const runBefore = (await t.call('GET', runUrl)).json();
    expect(runBefore.agent_config).toMatchObject({
      model_id: 'gpt-5-4-high',
      runner_id: v1.reviewer!.default_runner_uid,
    });

    const second = variant(edit(small, 'agents/reviewer/agent.md', 'model: gpt-5-4-high', 'model: gpt-5-4-mini'), {
      'automations/nightly-review/automation.md': null,
    });
    const proposed = await propose(factory, 'cheaper-reviews', second);
    expect(proposed).toMatchObject({
      status: 'OPEN',
      freshness: 'CURRENT',
      base_version: 1,
      changes: {
        agents: { added: [], changed: ['reviewer'], retired: [] },
        automations: { added: [], changed: [], retired: ['nightly-review'] },
        runners: NO_CHANGES,
        factory: { changed: false },
      },
    });
    const done = await apply(factory, proposed.uid);
    expect(done).toMatchObject({
      status: 'APPLIED',
      live_version: 2,
      changes: { agents: NO_CHANGES, automations: NO_CHANGES },
    });

    const v2 = await agentsOf(factory);
    expect(v2.reviewer).toMatchObject({ uid: v1.reviewer!.uid, base_model: 'gpt-5-4-mini' });
    expect(v2.foreman).toEqual(v1.foreman);
    expect(await automationsOf(factory)).toEqual([]);
    expect((await t.call('GET', `/factory/${factory}`)).json().definition).toMatchObject({
      version: 2,
      branch_uid: proposed.uid,
    });
    // The run that existed keeps its settings; a new one takes the new model.
    expect((await t.call('GET', runUrl)).json().agent_config).toEqual(runBefore.agent_config);
    const later = await t.call('POST', '/agent/runs', { prompt: 'review #13', agent_identity_uid: v1.reviewer!.uid });
    expect((await t.call('GET', `/agent/runs/${later.json().run_id}`)).json().agent_config).toMatchObject({
      model_id: 'gpt-5-4-mini',
    });

    // The history: which version, from which branch, by whom, when.
    const history = (await t.call('GET', `/factory/${factory}/definition/versions`)).json();
    expect(history.versions).toMatchObject([
      {
        version: 2,
        state: 'applied',
        branch_uid: proposed.uid,
        branch_name: 'cheaper-reviews',
        applied_by: { type: 'user' },
        applied_at: expect.any(String),
        changes: { automations: { retired: ['nightly-review'] }, agents: { changed: ['reviewer'] } },
      },
      {
        version: 1,
        state: 'applied',
        branch_uid: first.uid,
        branch_name: 'main',
        changes: { agents: { added: ['foreman', 'reviewer'] } },
      },
    ]);
    expect(history.page_info).toEqual({ has_next_page: false, next_cursor: null });
    const page = (await t.call('GET', `/factory/${factory}/definition/versions?limit=1`)).json();
    expect(page.versions.map((v: { version: number }) => v.version)).toEqual([2]);
    const rest = (
      await t.call('GET', `/factory/${factory}/definition/versions?limit=1&cursor=${page.page_info.next_cursor}`)
    ).json();
    expect(rest.versions.map((v: { version: number }) => v.version)).toEqual([1]);
    const definition = (await t.call('GET', `/factory/${factory}/definition`)).json();
    expect(definition).toMatchObject({ version: 2, branch_name: 'cheaper-reviews', files: expect.any(Array) });
    expect(definition.runners).toEqual([
      {
        uid: v1.reviewer!.default_runner_uid,
        name: 'linux-standard',
        description: null,
        setup_commands: [],
        instance_shape: { vcpus: 4, memory_gb: 16 },
        platform: { os: 'linux', arch: 'x86_64', docker_image: 'node:20-bookworm', mac_version: null },
      },
    ]);
    // The first branch is no longer what is in force, and the definition moved on since it was proposed.
    expect((await t.call('GET', `/factory/${factory}/branches/${first.uid}`)).json()).toMatchObject({
      status: 'OPEN',
      freshness: 'STALE',
      changes: { agents: { changed: ['reviewer'] }, automations: { added: ['nightly-review'] } },
    });
  });

  it('is idempotent by content: the same content again writes nothing', async () => {
    const factory = await newFactory();
    const branch = await propose(factory, 'main', small);
    await apply(factory, branch.uid);
    const before = await t.head();
    const again = await apply(factory, branch.uid);
    expect(again).toMatchObject({ status: 'APPLIED', live_version: 1 });
    // Another branch with the very same files is already in force too.
    const twin = await propose(factory, 'twin', small);
    expect(twin.status).toBe('APPLIED');
    const afterPropose = await t.head();
    expect(afterPropose).toBeGreaterThan(before);
    await apply(factory, twin.uid);
    expect(await t.head()).toBe(afterPropose);
    expect((await t.call('GET', `/factory/${factory}/definition/versions`)).json().versions).toHaveLength(1);
  });

  it('refuses an invalid branch with its diagnostics; the factory keeps its last valid definition', async () => {
    const factory = await newFactory();
    await apply(factory, (await propose(factory, 'main', small)).uid);
    const agentsBefore = await agentsOf(factory);
    const broken = await propose(factory, 'broken', edit(small, 'factory.yaml', 'alias: Pay', 'alias: &a Pay'));
    const problem = await expectRefused(
      t,
      () => t.call('POST', `/factory/${factory}/branches/${broken.uid}/apply`),
      400,
      'invalid_request',
    );
    expect(problem.diagnostics).toEqual([
      { code: 'FF_ANCHOR', path: 'factory.yaml', line: 5, column: 8, message: expect.any(String) },
    ]);
    expect(problem.errors).toEqual([{ path: 'factory.yaml:5:8', message: expect.stringMatching(/^FF_ANCHOR /) }]);
    expect(await agentsOf(factory)).toEqual(agentsBefore);
    expect((await t.call('GET', `/factory/${factory}`)).json().definition.version).toBe(1);
  });

  it('checks what only the service knows (models, secrets, webhook UIDs), naming the line, and decides nothing on a problem', async () => {
    const factory = await newFactory();
    const files = variant(edit(small, 'agents/reviewer/agent.md', 'model: gpt-5-4-high', 'model: gpt-9'), {
      'webhooks/deploys.yaml': 'authMode: token\nsecretName: DEPLOY_TOKEN\n',
      'automations/on-deploy/automation.md':
        '---\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [not-a-webhook]\n---\nCheck the deploy.\n',
    });
    const branch = await propose(factory, 'main', files);
    expect(branch.valid).toBe(true);
    const problem = await expectRefused(
      t,
      () => t.call('POST', `/factory/${factory}/branches/${branch.uid}/apply`),
      400,
    );
    expect(
      problem.diagnostics.map(
        (d: { code: string; path: string; line: number; column: number }) =>
          `${d.path}:${d.line}:${d.column} ${d.code}`,
      ),
    ).toEqual([
      'agents/reviewer/agent.md:4:8 FF_INVALID_REFERENCE',
      'automations/on-deploy/automation.md:6:21 FF_INVALID_REFERENCE',
      'webhooks/deploys.yaml:2:13 FF_INVALID_REFERENCE',
    ]);
    expect((await t.call('GET', `/factory/${factory}`)).json().definition).toBeNull();
  });

  it('gives a webhook defined in files the team secret it names, never a generated one, and its UID to automations', async () => {
    const factory = await newFactory();
    const team = (await t.call('GET', `/factory/${factory}`)).json().team_uid;
    const secret = await t.call('POST', `/teams/${team}/secrets`, {
      name: `DEPLOY_${factory.slice(-6)}`,
      value: 'a-long-enough-token-value',
    });
    expect(secret.statusCode, secret.body).toBe(201);
    const secretName = secret.json().name;
    const withHook = variant(small, {
      'webhooks/deploys.yaml': `secretName: ${secretName}\ndeliveryIdHeader: X-Deploy-Id\n`,
    });
    await apply(factory, (await propose(factory, 'main', withHook)).uid);
    const hooks = (await t.call('GET', `/factory/${factory}/webhooks`)).json().webhooks;
    expect(hooks).toMatchObject([
      { name: 'deploys', authMode: 'token', secretName, deliveryIdHeader: 'x-deploy-id', enabled: true },
    ]);
    const created = readEvents(t.dir, { prefix: `webhooks-${factory}` }).filter((e) => e.type === 'WebhookCreated');
    expect(created.map((e) => e.data.secret)).toEqual([{ team_secret: secretName }]);
    // Its UID now serves an automation's trigger.
    const onDeploy = variant(withHook, {
      'automations/on-deploy/automation.md': `---\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [${hooks[0].uid}]\n---\nCheck the deploy.\n`,
    });
    const next = await apply(factory, (await propose(factory, 'on-deploy', onDeploy)).uid);
    expect(next.live_version).toBe(2);
    expect((await automationsOf(factory)).map((a) => a.name)).toEqual(['nightly-review', 'on-deploy']);
    // A webhook's auth mode cannot change under its UID.
    const signed = edit(
      onDeploy,
      'webhooks/deploys.yaml',
      `secretName: ${secretName}`,
      `authMode: signature\nsignatureScheme: github\nsecretName: ${secretName}`,
    );
    const proposal = await propose(factory, 'signed', signed);
    const refused = await expectRefused(
      t,
      () => t.call('POST', `/factory/${factory}/branches/${proposal.uid}/apply`),
      400,
    );
    expect(refused.diagnostics).toMatchObject([{ code: 'FF_INVALID_VALUE', path: 'webhooks/deploys.yaml' }]);
  });

  it('does not revive a retired agent: declared again, it is a new identity', async () => {
    const factory = await newFactory();
    await apply(factory, (await propose(factory, 'main', small)).uid);
    const reviewer = (await agentsOf(factory)).reviewer!;
    const withoutReviewer = variant(small, {
      'agents/reviewer/agent.md': null,
      'automations/nightly-review/automation.md': null,
    });
    const v2 = await apply(factory, (await propose(factory, 'no-reviewer', withoutReviewer)).uid);
    expect(v2.live_version).toBe(2);
    expectProblem(await t.call('GET', `/agent/identities/${reviewer.uid}`), 404);
    await apply(factory, (await propose(factory, 'reviewer-again', small)).uid);
    const back = (await agentsOf(factory)).reviewer!;
    expect(back.uid).not.toBe(reviewer.uid);
    expectProblem(await t.call('GET', `/agent/identities/${reviewer.uid}`), 404);
  });

  it('takes over a live agent of the same name, keeping its uid and keys, and leaves the others alone', async () => {
    const factory = await newFactory();
    const foreman = (
      await t.call('POST', '/agent/identities', { name: 'foreman', agent_type: 'FOREMAN', factory_uid: factory })
    ).json();
    const other = (await t.call('POST', '/agent/identities', { name: 'helper', factory_uid: factory })).json();
    const key = (await t.call('POST', `/agent/identities/${foreman.uid}/api-keys`)).json().api_key;
    const branch = await propose(factory, 'main', small);
    expect(branch.changes.agents).toEqual({ added: ['reviewer'], changed: ['foreman'], retired: [] });
    await apply(factory, branch.uid);
    const agents = await agentsOf(factory);
    expect(agents.foreman).toMatchObject({ uid: foreman.uid, prompt: 'You are the foreman of the payments factory.' });
    expect(agents.helper).toEqual((await t.call('GET', `/agent/identities/${other.uid}`)).json());
    expect((await t.call('GET', '/teams', undefined, key)).statusCode).toBe(200);
  });

  it('applies scorers through the scorers feature: created, changed as a new version, retired', async () => {
    const factory = await newFactory();
    const scorer = [
      '---',
      'description: Was the review useful?',
      'agents: [reviewer]',
      'labels:',
      '  - value: useful',
      '    score: 1',
      '  - value: noise',
      '    score: 0',
      'passingScore: 1',
      'samplingRate: 50',
      'model: gpt-5-4-mini',
      '---',
      'Judge the review.',
      '',
    ].join('\n');
    const withScorer = variant(small, { 'scorers/review-quality/scorer.md': scorer });
    const first = await propose(factory, 'main', withScorer);
    expect(first.changes.scorers).toEqual({ added: ['review-quality'], changed: [], retired: [] });
    await apply(factory, first.uid);
    const reviewer = (await agentsOf(factory)).reviewer!;
    const listed = (await t.call('GET', `/factory/${factory}/scorers`)).json().scorers;
    expect(listed).toMatchObject([
      {
        name: 'review-quality',
        description: 'Was the review useful?',
        scoring_prompt: 'Judge the review.',
        model_id: 'gpt-5-4-mini',
        threshold: 1,
        scope_mode: 'selected_agents',
        agent_uids: [reviewer.uid],
        sampling_rate: 50,
        version: 1,
      },
    ]);
    const definition = (await t.call('GET', `/factory/${factory}/definition`)).json();
    expect(definition.resources).toContainEqual({
      kind: 'scorers',
      name: 'review-quality',
      uid: listed[0].uid,
    });

    const stricter = variant(withScorer, {
      'scorers/review-quality/scorer.md': scorer.replace('samplingRate: 50', 'samplingRate: 10'),
    });
    const second = await propose(factory, 'sample-less', stricter);
    expect(second.changes.scorers).toEqual({ added: [], changed: ['review-quality'], retired: [] });
    await apply(factory, second.uid);
    expect((await t.call('GET', `/factory/${factory}/scorers`)).json().scorers).toMatchObject([
      { name: 'review-quality', sampling_rate: 10, version: 2 },
    ]);

    const third = await propose(factory, 'no-scorer', small);
    expect(third.changes.scorers).toEqual({ added: [], changed: [], retired: ['review-quality'] });
    await apply(factory, third.uid);
    expect((await t.call('GET', `/factory/${factory}/scorers`)).json().scorers).toEqual([]);
  });

  it('takes no target: a body naming one is refused', async () => {
    const factory = await newFactory();
    const branch = await propose(factory, 'main', small);
    await expectRefused(
      t,
      () => t.call('POST', `/factory/${factory}/branches/${branch.uid}/apply`, { sha: 'a'.repeat(40) }),
      400,
    );
    await expectRefused(
      t,
      () => t.call('POST', `/factory/${factory}/branches/${branch.uid}/apply`, { repository: 'acme/x' }),
      400,
    );
  });
});

describe('the factory_branches feature', () => {
  it('answers every branch operation 403 feature_not_available when off, writing nothing', async () => {
    const off = await startTestApp({ FACTORY_BRANCHES: 'false' });
    try {
      const factory = (await off.call('POST', '/factory', { name: 'Off' })).json().uid;
      const base = `/factory/${factory}/branches`;
      for (const [method, url, body] of [
        ['POST', base, { name: 'main', files: asList(small) }],
        ['GET', base],
        ['GET', `${base}/b-1`],
        ['PUT', `${base}/b-1/files`, { files: [] }],
        ['DELETE', `${base}/b-1`],
        ['POST', `${base}/b-1/apply`],
      ] as const)
        await expectRefused(off, () => off.call(method, url, body), 403, 'feature_not_available');
      // Validation needs no branch.
      expect((await off.call('POST', '/factory-files/validate', { files: asList(small) }, null)).json().valid).toBe(
        true,
      );
    } finally {
      await off.close();
    }
  });
});
