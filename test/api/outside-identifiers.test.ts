/**
 * Identifiers from outside name each team's own record (issue #30): a pull-request URL, a skill
 * spec, a suite uid a client chose, an external reference, a delivery's identity, a branch name,
 * an Idempotency-Key. Two teams use the same one, each with its own key and factory, and neither
 * sees nor changes what the other has. Team A is the bootstrap admin's; team B has its own admin
 * (the bootstrap admin, who made it, leaves it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pullRequestStream } from '../../commands/analytics/events.js';
import { pullRequestRef } from '../../commands/analytics/github.js';
import { pullRequestsProjection } from '../../projections/analytics/pull-requests.js';
import { manualClock } from '../../src/clock.js';
import { verifyProjection } from '../../src/projector/rebuild.js';
import {
  deliver,
  executeRun,
  type GithubHook,
  githubHook,
  newWorker,
  person,
  priceListFile,
  pullRequest,
  settle,
  tokens,
  type Worker,
} from '../helpers/analytics-fixtures.js';
import { ADMIN_KEY, startTestApp, type TestApp } from '../helpers/app.js';
import { asList, fixture } from '../helpers/factory-files.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-outside-ids-'));
const clock = manualClock('2026-03-02T08:00:00Z');

interface Team {
  uid: string;
  key: string;
  factory: string;
  /** An agent of the factory, announced as a worker. */
  worker: Worker;
}

let t: TestApp;
let a: Team;
let b: Team;

/** The team's side of the tests: a factory of acme/app, with its worker. */
async function newTeam(uid: string, key: string, name: string): Promise<Team> {
  const body = { name: 'Widgets', repositories: [{ owner: 'acme', repo: 'app' }] };
  const res = await t.call('POST', '/factory', body, key);
  expect(res.statusCode, res.body).toBe(201);
  const factory = res.json().uid as string;
  return { uid, key, factory, worker: await newWorker(t, factory, `Builder ${name}`, key) };
}

beforeAll(async () => {
  t = await startTestApp({ MODELS_FILE: priceListFile(dir) }, clock);
  const team = (await t.call('POST', '/teams', { name: 'Other company' })).json().uid as string;
  const bob = await t.addMember(team, { email: 'bob@other.example', role: 'admin' });
  const left = await t.call('DELETE', `/teams/${team}/members/${t.adminUid}`, undefined, bob.api_key);
  expect(left.statusCode, left.body).toBe(204);
  a = await newTeam(t.teamUid, ADMIN_KEY, 'A');
  b = await newTeam(team, bob.api_key, 'B');
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** GET as the team's own key, expecting 200. */
const get = async (team: Team, url: string) => {
  const res = await t.call('GET', url, undefined, team.key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

describe('pull_requests: one document per team and pull request URL', () => {
  const SHARED = 'https://github.com/acme/app/pull/1';
  const A_ONLY = 'https://github.com/acme/app/pull/2';
  const DAY = 'start_date=2026-03-02T00:00:00Z&end_date=2026-03-03T00:00:00Z';
  const times = { created: '2026-03-02T09:00:00Z', claimed: '2026-03-02T09:00:00Z', started: '2026-03-02T09:00:00Z' };
  const runs = { a: '', b: '' };
  const hooks = {} as Record<'a' | 'b', GithubHook>;

  /** The team's listed pull requests, by URL. */
  const listed = async (team: Team) => {
    const body = await get(team, `/factory/${team.factory}/pull-requests`);
    return new Map(body.pull_requests.map((pr: { url: string }) => [pr.url, pr]));
  };

  beforeAll(async () => {
    hooks.a = await githubHook(t, a.factory, a.key);
    hooks.b = await githubHook(t, b.factory, b.key);
    // A's tree ($2.5: $1 inference, an hour of machine and platform time) names both pull requests;
    // B's ($4.5: $3 inference) names the shared one.
    runs.a = await executeRun(
      t,
      clock,
      a.worker,
      { agent_identity_uid: a.worker.agentUid },
      times,
      [
        { at: '2026-03-02T09:20:00Z', usage: tokens('small', { input: 1_000_000 }) },
        { at: '2026-03-02T09:45:00Z', pr: { url: SHARED, branch: 'fix' } },
        { at: '2026-03-02T09:46:00Z', pr: { url: A_ONLY, branch: 'other' } },
        { at: '2026-03-02T10:00:00Z', finish: 'SUCCEEDED' },
      ],
      a.key,
    );
    runs.b = await executeRun(
      t,
      clock,
      b.worker,
      { agent_identity_uid: b.worker.agentUid },
      times,
      [
        { at: '2026-03-02T09:20:00Z', usage: tokens('small', { input: 3_000_000 }) },
        { at: '2026-03-02T09:45:00Z', pr: { url: SHARED, branch: 'fix' } },
        { at: '2026-03-02T10:00:00Z', finish: 'SUCCEEDED' },
      ],
      b.key,
    );
    // A's webhook: Ada opened it. B's: a push to its branch, then a newer snapshot (merged, another
    // title, author and size), and a forged opening of the pull request only A's run named.
    clock.set('2026-03-02T10:30:00Z');
    const opened = { created_at: '2026-03-02T09:30:00Z', user: person('ada'), additions: 10, deletions: 5 };
    await deliver(t, hooks.a, {
      action: 'opened',
      pull_request: pullRequest('acme/app', 1, { ...opened, title: 'Fix the login' }),
      repository: { full_name: 'acme/app' },
      sender: person('ada'),
    });
    await deliver(t, hooks.b, {
      ref: 'refs/heads/fix',
      after: 'b'.repeat(40),
      commits: [{ id: 'b'.repeat(40) }],
      head_commit: { id: 'b'.repeat(40), timestamp: '2026-03-02T10:30:00Z' },
      repository: { full_name: 'acme/app' },
      sender: person('mallory'),
    });
    await deliver(t, hooks.b, {
      action: 'closed',
      pull_request: pullRequest('acme/app', 1, {
        title: 'Forged',
        user: person('mallory'),
        state: 'closed',
        merged: true,
        updated_at: '2026-03-02T11:00:00Z',
        merged_at: '2026-03-02T11:00:00Z',
        closed_at: '2026-03-02T11:00:00Z',
        additions: 5000,
        deletions: 0,
      }),
      repository: { full_name: 'acme/app' },
      sender: person('mallory'),
    });
    await deliver(t, hooks.b, {
      action: 'opened',
      pull_request: pullRequest('acme/app', 2, { ...opened, title: 'Forged too', head: 'other' }),
      repository: { full_name: 'acme/app' },
      sender: person('mallory'),
    });
    clock.set('2026-03-02T12:00:00Z');
    const followUp = await t.call('POST', `/agent/runs/${runs.b}/followups`, { message: 'And the docs' }, b.key);
    expect(followUp.statusCode, followUp.body).toBe(200);
    clock.set('2026-03-03T09:00:00Z');
    await settle(t);
  });

  it('lists only the team’s own runs, facts and interactions of a URL both teams reported', async () => {
    const ours = (await listed(a)).get(SHARED);
    expect(ours).toMatchObject({
      team_uid: a.uid,
      factory_uid: a.factory,
      runs: [{ run_id: runs.a }],
      title: 'Fix the login',
      author_login: 'ada',
      state: 'open',
      additions: 10,
      human_interactions: { opened: 1, code_push: 0, pr_action: 0, follow_up_message: 0, total: 1 },
    });
    const theirs = (await listed(b)).get(SHARED);
    expect(theirs).toMatchObject({
      team_uid: b.uid,
      factory_uid: b.factory,
      runs: [{ run_id: runs.b }],
      title: 'Forged',
      author_login: 'mallory',
      state: 'merged',
      additions: 5000,
      human_interactions: { opened: 0, code_push: 1, pr_action: 1, follow_up_message: 1, total: 3 },
    });
  });

  it('keeps another team’s webhook facts off a pull request only this team’s runs named', async () => {
    expect((await listed(a)).get(A_ONLY)).toMatchObject({ title: null, state: null, history_complete: false });
    // B's facts wait, unlisted, for one of B's runs to name it.
    expect([...(await listed(b)).keys()]).toEqual([SHARED]);
  });

  it('counts each team’s own dollars and merges', async () => {
    const top = async (team: Team) =>
      (await get(team, `/factory/${team.factory}/costs/per-pr/top?${DAY}&limit=5`)).data.map(
        (pr: { url: string; dollars: { total: number } }) => [pr.url, pr.dollars.total],
      );
    expect(await top(a)).toEqual([
      [SHARED, 1.25],
      [A_ONLY, 1.25],
    ]);
    expect(await top(b)).toEqual([[SHARED, 4.5]]);
    const merged = async (team: Team) =>
      (await get(team, `/factory/${team.factory}/metrics?${DAY}`)).autonomy_funnel.total_merged;
    expect(await merged(a)).toBe(0);
    expect(await merged(b)).toBe(1);
  });

  it('gives each team its own documents when rebuilt from facts recorded in one stream per URL, as before', async () => {
    // Before issue #30 a URL's facts of every team went to one stream, `pullrequest-<pr_id>`.
    const { pr_id } = pullRequestRef(SHARED)!;
    const recorded = (await t.rt.events.readStream(pullRequestStream(b.uid, pr_id))).find(
      (e) => (e.data as { action: string | null }).action === 'closed',
    );
    const data = recorded!.data as { snapshot: Record<string, unknown> };
    const { position } = await t.rt.events.append(
      `pullrequest-${pr_id}`,
      [
        {
          id: '00000000-0000-4000-8000-000000000030',
          type: 'PullRequestFactsObserved',
          data: {
            ...data,
            source_event_id: 'recorded-before-the-fix',
            snapshot: { ...data.snapshot, title: 'Renamed', updated_at: '2026-03-02T12:00:00.000Z' },
          },
          metadata: recorded!.metadata,
        },
      ],
      'no_stream',
    );
    await t.rt.projector.waitFor(position);
    expect((await listed(a)).get(SHARED)).toMatchObject({ title: 'Fix the login', runs: [{ run_id: runs.a }] });
    expect((await listed(b)).get(SHARED)).toMatchObject({ title: 'Renamed', runs: [{ run_id: runs.b }] });
    // `shopfloor projections verify`: a rebuild from the whole log gives the same documents.
    expect(await verifyProjection(t.rt.events, t.rt.docs, pullRequestsProjection)).toEqual([]);
  });
});

describe('skills: one document per team and skill spec', () => {
  const SPEC = 'acme/tools:skills/lint/SKILL.md';
  const report = async (team: Team, description: string | null) => {
    const skills = description
      ? [
          {
            repo: 'acme/tools',
            path: 'skills/lint/SKILL.md',
            name: 'lint',
            description,
            base_prompt: 'Lint.',
            error: null,
          },
        ]
      : [];
    const path = `/agent/workers/${team.worker.workerId}/skills`;
    const res = await t.call('PUT', path, { repos: ['acme/tools'], skills }, team.worker.key);
    expect(res.statusCode, res.body).toBe(200);
  };
  const lint = async (team: Team) =>
    (await get(team, '/agent')).agents.find((s: { name: string }) => s.name === 'lint')?.variants;

  it('keeps each team’s report of one spec, and the runs that name it, to that team', async () => {
    await report(a, 'Lints the way A does');
    await report(b, 'Lints the way B does');
    clock.set('2026-03-04T09:00:00Z');
    const run = await t.call('POST', '/agent/runs', { config: { skill_spec: SPEC } }, b.key);
    expect(run.statusCode, run.body).toBe(200);
    expect(await lint(a)).toEqual([
      expect.objectContaining({ id: SPEC, description: 'Lints the way A does', last_run_timestamp: null }),
    ]);
    expect(await lint(b)).toEqual([
      expect.objectContaining({
        id: SPEC,
        description: 'Lints the way B does',
        last_run_timestamp: '2026-03-04T09:00:00.000Z',
      }),
    ]);
    // B's worker no longer has it: A's stays.
    await report(b, null);
    expect(await lint(b)).toBeUndefined();
    expect(await lint(a)).toEqual([expect.objectContaining({ description: 'Lints the way A does' })]);
  });
});

describe('benchmark_suites and suite-<factory_uid>:<suite_uid>: a suite uid the client chose', () => {
  it('is each factory’s own: created, changed and deleted apart', async () => {
    const suites = (team: Team) => `/factory/${team.factory}/benchmarks`;
    const create = async (team: Team, name: string) => {
      const body = { uid: 'nightly', name, agent_uid: team.worker.agentUid };
      const res = await t.call('POST', suites(team), body, team.key);
      expect(res.statusCode, res.body).toBe(201);
    };
    await create(a, 'Nightly A');
    await create(b, 'Nightly B');
    const task = { title: 'Task 1', prompt: 'Solve it', success_criteria: 'It prints OK' };
    const added = await t.call('POST', `${suites(b)}/nightly/tasks`, task, b.key);
    expect(added.statusCode, added.body).toBe(201);
    expect(await get(a, `${suites(a)}/nightly`)).toMatchObject({ name: 'Nightly A', version: 1, task_count: 0 });
    expect(await get(b, `${suites(b)}/nightly`)).toMatchObject({ name: 'Nightly B', version: 2, task_count: 1 });
    const deleted = await t.call('DELETE', `${suites(b)}/nightly`, undefined, b.key);
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect(await get(a, `${suites(a)}/nightly`)).toMatchObject({ name: 'Nightly A' });
  });
});

describe('runs: an external reference both teams reported', () => {
  it('finds each team’s own run', async () => {
    const url = 'https://linear.app/acme/issue/ENG-1';
    const reference = { artifact_type: 'EXTERNAL_REFERENCE', reference_type: 'linear_issue', url };
    const times = { created: '2026-03-05T09:00:00Z', claimed: '2026-03-05T09:00:00Z', started: '2026-03-05T09:00:00Z' };
    const runOf = async (team: Team) => {
      const body = { agent_identity_uid: team.worker.agentUid };
      const steps = [{ at: '2026-03-05T09:10:00Z', artifact: reference }];
      return executeRun(t, clock, team.worker, body, times, steps, team.key);
    };
    const runs = { a: await runOf(a), b: await runOf(b) };
    const find = (team: Team) => get(team, `/agent/run-by-external-reference?url=${encodeURIComponent(url)}`);
    expect(await find(a)).toEqual({ run_id: runs.a });
    expect(await find(b)).toEqual({ run_id: runs.b });
  });
});

describe('delivery-<webhook_uid>-<identity>: one delivery identity at two teams’ webhooks', () => {
  it('is a first delivery at each; a repeat is a Duplicate at its own webhook only', async () => {
    const hooks = { a: await githubHook(t, a.factory, a.key), b: await githubHook(t, b.factory, b.key) };
    // A signed GitHub delivery's identity is its body: the same body is the same delivery.
    const body = { zen: 'Keep it logically awesome.', hook_id: 30 };
    await deliver(t, hooks.a, body);
    await deliver(t, hooks.b, body);
    await deliver(t, hooks.a, body);
    const statuses = async (team: Team, hook: GithubHook) =>
      (await get(team, `/factory/${team.factory}/webhooks/${hook.uid}/deliveries`)).deliveries.map(
        (d: { status: string }) => d.status,
      );
    expect(await statuses(a, hooks.a)).toEqual(['duplicate', 'accepted']);
    expect(await statuses(b, hooks.b)).toEqual(['accepted']);
  });
});

describe('branchname-<factory_uid>-<name>: a branch name', () => {
  it('is each factory’s own: both teams propose one name, and deleting one leaves the other', async () => {
    const files = asList(fixture('small'));
    const propose = (team: Team) =>
      t.call('POST', `/factory/${team.factory}/branches`, { name: 'proposal', files }, team.key);
    const ours = await propose(a);
    expect(ours.statusCode, ours.body).toBe(201);
    const theirs = await propose(b);
    expect(theirs.statusCode, theirs.body).toBe(201);
    expect((await propose(a)).statusCode).toBe(409);
    const deleted = await t.call('DELETE', `/factory/${b.factory}/branches/${theirs.json().uid}`, undefined, b.key);
    expect(deleted.statusCode, deleted.body).toBe(204);
    const branch = await get(a, `/factory/${a.factory}/branches/${ours.json().uid}`);
    expect(branch).toMatchObject({ name: 'proposal', status: 'OPEN' });
  });
});

describe('idempotency-<principal, key>: one Idempotency-Key used in two teams', () => {
  it('answers each principal with its own creation, and a retry with its own first answer', async () => {
    const create = (team: Team, name: string) =>
      t.call('POST', '/factory', { name }, team.key, { 'idempotency-key': 'create-factory-30' });
    const ours = await create(a, 'Made by A');
    const theirs = await create(b, 'Made by B');
    expect([ours.statusCode, theirs.statusCode]).toEqual([201, 201]);
    expect(ours.json()).toMatchObject({ name: 'Made by A', team_uid: a.uid });
    expect(theirs.json()).toMatchObject({ name: 'Made by B', team_uid: b.uid });
    expect((await create(a, 'Made by A')).json()).toEqual(ours.json());
  });
});
