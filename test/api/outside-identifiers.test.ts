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
import { pullRequestsProjection } from '../../projections/pull-requests.js';
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

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-outside-ids-'));
const clock = manualClock('2026-03-02T08:00:00Z');

interface Team {
  uid: string;
  key: string;
  factory: string;
}

let t: TestApp;
let a: Team;
let b: Team;

const newFactory = async (key: string) => {
  const res = await t.call(
    'POST',
    '/factory',
    { name: 'Widgets', repositories: [{ owner: 'acme', repo: 'app' }] },
    key,
  );
  expect(res.statusCode, res.body).toBe(201);
  return res.json().uid as string;
};

beforeAll(async () => {
  t = await startTestApp({ MODELS_FILE: priceListFile(dir) }, clock);
  a = { uid: t.teamUid, key: ADMIN_KEY, factory: await newFactory(ADMIN_KEY) };
  const team = (await t.call('POST', '/teams', { name: 'Other company' })).json().uid as string;
  const bob = await t.addMember(team, { email: 'bob@other.example', role: 'admin' });
  const left = await t.call('DELETE', `/teams/${team}/members/${t.adminUid}`, undefined, bob.api_key);
  expect(left.statusCode, left.body).toBe(204);
  b = { uid: team, key: bob.api_key, factory: await newFactory(bob.api_key) };
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
  const workers = {} as Record<'a' | 'b', Worker>;

  /** The team's listed pull requests, by URL. */
  const listed = async (team: Team) => {
    const body = await get(team, `/factory/${team.factory}/pull-requests`);
    return new Map(body.pull_requests.map((pr: { url: string }) => [pr.url, pr]));
  };

  beforeAll(async () => {
    for (const [name, team] of [
      ['a', a],
      ['b', b],
    ] as const) {
      workers[name] = await newWorker(t, team.factory, `Builder ${name}`, team.key);
      hooks[name] = await githubHook(t, team.factory, team.key);
    }
    // A's tree ($2.5: $1 inference, an hour of machine and platform time) names both pull requests;
    // B's ($4.5: $3 inference) names the shared one.
    runs.a = await executeRun(
      t,
      clock,
      workers.a,
      { agent_identity_uid: workers.a.agentUid },
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
      workers.b,
      { agent_identity_uid: workers.b.agentUid },
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
