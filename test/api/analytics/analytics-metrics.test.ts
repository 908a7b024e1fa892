/**
 * The metrics, cost and pull-request operations through the real app, over one factory's day
 * made through the API on an injected clock (runs executed by a worker, GitHub deliveries signed
 * as GitHub signs them); every figure worked out by hand below.
 *
 * 2026-03-02, factory Widgets (repository acme/app), the worker's agent Builder, prices of
 * `priceListFile` (small: $1 per million input tokens; machine $1/h, platform $0.5/h):
 * - run A (model small): 09:00-10:00, 1 M small input tokens ($1), opens PR 1 at 09:45;
 * - run B, A's sub-run: 10:05-11:05, opens PR 2 at 10:30 (B names no model: small by default);
 * - run C (model big) continues A's conversation: 12:30-13:30, 0.1 M big input tokens ($1), which
 *   counts for A (the conversation's earliest run), in A's tree;
 * - the admin sends A a follow-up at 14:00.
 * Machine and platform time: 1 h each of A, B and C = $3 compute, $1.5 platform.
 * A's tree (A, B): inference $2 (A's and C's), compute $2, platform $1 = $5, split over PR 1 and PR 2:
 * $2.5 each (inference 1, compute 1, platform 0.5).
 * PR 1, on GitHub: opened by the bot at 09:30 (+50 -10), approved by Ada at 11:00 (and reviewed by
 * a bot), merged by Ada at 12:00. PR 2: no delivery.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import {
  bot,
  deliver,
  executeRun,
  githubHook,
  newWorker,
  person,
  priceListFile,
  pullRequest,
  settle,
  tokens,
  type Worker,
} from '../../helpers/analytics-fixtures.js';
import { expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-metrics-'));
const clock = manualClock('2026-03-02T08:00:00Z');
const PR1 = 'https://github.com/acme/app/pull/1';
const PR2 = 'https://github.com/acme/app/pull/2';
const DAY = 'start_date=2026-03-02T00:00:00Z&end_date=2026-03-03T00:00:00Z';

let t: TestApp;
let factory: string;
let worker: Worker;
const runs: Record<'A' | 'B' | 'C', string> = { A: '', B: '', C: '' };

beforeAll(async () => {
  t = await startTestApp({ MODELS_FILE: priceListFile(dir) }, clock);
  factory = (
    await t.call('POST', '/factory', { name: 'Widgets', repositories: [{ owner: 'acme', repo: 'app' }] })
  ).json().uid;
  worker = await newWorker(t, factory, 'Builder');
  const hook = await githubHook(t, factory);
  const agent = { agent_identity_uid: worker.agentUid };

  runs.A = await executeRun(
    t,
    clock,
    worker,
    { ...agent, config: { model_id: 'small' } },
    { created: '2026-03-02T09:00:00Z', claimed: '2026-03-02T09:00:00Z', started: '2026-03-02T09:00:00Z' },
    [
      { at: '2026-03-02T09:20:00Z', usage: tokens('small', { input: 1_000_000 }) },
      { at: '2026-03-02T09:45:00Z', pr: { url: PR1, branch: 'fix-1' } },
      { at: '2026-03-02T10:00:00Z', finish: 'SUCCEEDED' },
    ],
  );
  clock.set('2026-03-02T09:30:00Z');
  await deliver(t, hook, {
    action: 'opened',
    pull_request: pullRequest('acme/app', 1, {
      created_at: '2026-03-02T09:30:00Z',
      additions: 50,
      deletions: 10,
      head: 'fix-1',
    }),
    repository: { full_name: 'acme/app' },
    sender: bot('shopfloor[bot]'),
  });
  runs.B = await executeRun(
    t,
    clock,
    worker,
    { ...agent, parent_run_id: runs.A },
    { created: '2026-03-02T10:05:00Z', claimed: '2026-03-02T10:05:00Z', started: '2026-03-02T10:05:00Z' },
    [
      { at: '2026-03-02T10:30:00Z', pr: { url: PR2, branch: 'fix-2' } },
      { at: '2026-03-02T11:05:00Z', finish: 'SUCCEEDED' },
    ],
  );
  const review = (id: number, user: Record<string, string>, state: string) => ({
    action: 'submitted',
    review: { id, user, state, submitted_at: '2026-03-02T11:00:00Z' },
    pull_request: pullRequest('acme/app', 1, {
      created_at: '2026-03-02T09:30:00Z',
      updated_at: '2026-03-02T11:00:00Z',
    }),
    repository: { full_name: 'acme/app' },
    sender: user,
  });
  clock.set('2026-03-02T11:00:00Z');
  await deliver(t, hook, review(11, bot('reviewer[bot]'), 'commented'));
  await deliver(t, hook, review(12, person('ada'), 'approved'));
  clock.set('2026-03-02T12:00:00Z');
  await deliver(t, hook, {
    action: 'closed',
    pull_request: pullRequest('acme/app', 1, {
      state: 'closed',
      merged: true,
      created_at: '2026-03-02T09:30:00Z',
      updated_at: '2026-03-02T12:00:00Z',
      merged_at: '2026-03-02T12:00:00Z',
      closed_at: '2026-03-02T12:00:00Z',
      additions: 50,
      deletions: 10,
      head: 'fix-1',
    }),
    repository: { full_name: 'acme/app' },
    sender: person('ada'),
  });
  const conversation = (await t.call('GET', `/agent/runs/${runs.A}`)).json().conversation_id;
  runs.C = await executeRun(
    t,
    clock,
    worker,
    { ...agent, conversation_id: conversation, config: { model_id: 'big' } },
    { created: '2026-03-02T12:30:00Z', claimed: '2026-03-02T12:30:00Z', started: '2026-03-02T12:30:00Z' },
    [
      { at: '2026-03-02T13:00:00Z', usage: tokens('big', { input: 100_000 }) },
      { at: '2026-03-02T13:30:00Z', finish: 'SUCCEEDED' },
    ],
  );
  clock.set('2026-03-02T14:00:00Z');
  const followup = await t.call('POST', `/agent/runs/${runs.A}/followups`, { message: 'Please also update the docs' });
  expect(followup.statusCode, followup.body).toBe(200);
  await settle(t);
  clock.set('2026-03-03T09:00:00Z');
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const get = async (url: string) => {
  const res = await t.call('GET', url);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

describe('GET /factory/{uid}/costs/breakdown', () => {
  it('sums the day’s spend by model: inference at the model of the run it counts for, time at each run’s', async () => {
    const body = await get(`/factory/${factory}/costs/breakdown?group_by=model&${DAY}`);
    expect(body).toMatchObject({
      team_uid: t.teamUid,
      factory_uid: factory,
      as_of: '2026-03-03T09:00:00.000Z',
      start_date: '2026-03-02T00:00:00.000Z',
      end_date: '2026-03-03T00:00:00.000Z',
      group_by: 'model',
      total: { inference: 2, compute: 3, platform: 1.5, total: 6.5 },
    });
    // C's inference counts for A (small); C's own time for C (big).
    expect(body.groups).toEqual([
      {
        key: 'small',
        label: 'Small',
        deleted: false,
        photo_url: null,
        dollars: { inference: 2, compute: 2, platform: 1, total: 5 },
      },
      {
        key: 'big',
        label: 'Big',
        deleted: false,
        photo_url: null,
        dollars: { inference: 0, compute: 1, platform: 0.5, total: 1.5 },
      },
    ]);
  });

  it('attributes a whole tree to its root’s creator and source, and each run to its agent', async () => {
    const byUser = await get(`/factory/${factory}/costs/breakdown?group_by=user&${DAY}`);
    expect(byUser.groups).toEqual([
      expect.objectContaining({
        key: t.adminUid,
        deleted: false,
        dollars: { inference: 2, compute: 3, platform: 1.5, total: 6.5 },
      }),
    ]);
    const bySource = await get(`/factory/${factory}/costs/breakdown?group_by=source&${DAY}`);
    expect(bySource.groups.map((g: { key: string }) => g.key)).toEqual(['API']);
    const byAgent = await get(`/factory/${factory}/costs/breakdown?group_by=agent&${DAY}`);
    expect(byAgent.groups).toEqual([
      expect.objectContaining({ key: worker.agentUid, label: 'Builder', deleted: false }),
    ]);
  });

  it('gives a series per period, and nothing outside the range', async () => {
    const body = await get(
      `/factory/${factory}/costs/breakdown?group_by=source&start_date=2026-03-01T00:00:00Z&end_date=2026-03-04T00:00:00Z&group_by_period=day`,
    );
    expect(body.period_list).toEqual(['2026-03-01', '2026-03-02', '2026-03-03']);
    expect(body.series.total.map((d: { total: number }) => d.total)).toEqual([0, 6.5, 0]);
    expect(body.groups[0].series.map((d: { total: number }) => d.total)).toEqual([0, 6.5, 0]);
    const before = await get(`/factory/${factory}/costs/breakdown?group_by=source&end_date=2026-03-02T09:00:00Z`);
    expect(before).toMatchObject({ total: { total: 0 }, groups: [] });
  });

  it('answers CSV with a header row for spreadsheets', async () => {
    const res = await t.call('GET', `/factory/${factory}/costs/breakdown?group_by=model&${DAY}`, undefined, undefined, {
      accept: 'text/csv',
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.body).toBe(
      'key,label,deleted,inference,compute,platform,total\r\nsmall,Small,false,2,2,1,5\r\nbig,Big,false,0,1,0.5,1.5\r\n',
    );
  });
});

describe('GET /factory/{uid}/costs/per-pr', () => {
  it('gives the PRs first seen in the range, the mean of their shares and the median', async () => {
    const body = await get(`/factory/${factory}/costs/per-pr?${DAY}`);
    expect(body).toMatchObject({
      pr_count: 2,
      dollars: { inference: 2, compute: 2, platform: 1, total: 5 },
      mean: { inference: 1, compute: 1, platform: 0.5, total: 2.5 },
      median: 2.5,
    });
  });

  it('ranks the costliest PRs with their model mix, kickoff run and details', async () => {
    const body = await get(`/factory/${factory}/costs/per-pr/top?${DAY}&limit=5`);
    expect(body.data.map((pr: { url: string }) => pr.url)).toEqual([PR1, PR2]); // equal cost: first seen first
    const [one, two] = body.data;
    expect(one).toMatchObject({
      url: PR1,
      repo_full_name: 'acme/app',
      pr_number: 1,
      state: 'merged',
      dollars: { total: 2.5 },
      // The model mix is of the models that served the tokens: A's small, and C's big (counted for A).
      models: [
        { model_id: 'big', share: 0.5 },
        { model_id: 'small', share: 0.5 },
      ],
      creator: { type: 'user', uid: t.adminUid },
      source: 'API',
      requested_model_id: 'small',
    });
    // PR 2 predates any webhook fact: its detail fields are null.
    expect(two).toMatchObject({ url: PR2, state: null, title: null, additions: null, history_complete: false });
  });

  it('groups PR costs by size, sized only when its line counts were observed', async () => {
    const body = await get(`/factory/${factory}/costs/per-pr/by-size?${DAY}`);
    expect(body).toMatchObject({ pr_count: 2, sized_pr_count: 1 });
    expect(body.buckets).toEqual([
      { size: 'S', pr_count: 1, mean: { inference: 1, compute: 1, platform: 0.5, total: 2.5 }, median: 2.5 },
      { size: 'M', pr_count: 0, mean: null, median: null },
      { size: 'L', pr_count: 0, mean: null, median: null },
      { size: 'XL', pr_count: 0, mean: null, median: null },
    ]);
  });
});

describe('GET /factory/{uid}/metrics', () => {
  it('counts runs, PRs, autonomy, impact and cycle times', async () => {
    const body = await get(`/factory/${factory}/metrics?${DAY}`);
    expect(body).toEqual({
      as_of: '2026-03-03T09:00:00.000Z',
      team_uid: t.teamUid,
      factory_uid: factory,
      start_date: '2026-03-02T00:00:00.000Z',
      end_date: '2026-03-03T00:00:00.000Z',
      run_count: 3,
      pr_count: 2,
      merged_pr_count: 1,
      // PR 1: Ada's approval, her merge and the admin's follow-up to A; PR 2: none.
      average_human_interactions_per_pr: 1.5,
      autonomy: 1,
      autonomy_funnel: {
        total_merged: 1,
        factory_merged: 1,
        factory_merged_observed: 1,
        merged_without_human_code_change: 1,
        repos: ['acme/app'],
      },
      impact: { additions: 50, deletions: 10, merged_pr_count: 1, measured_pr_count: 1 },
      pr_latency: {
        merged_pr_count: 1,
        kickoff_to_pr: { median_seconds: 1800, measured_pr_count: 1 },
        pr_to_first_review: { median_seconds: 5400, measured_pr_count: 1 },
        first_review_to_merge: { median_seconds: 3600, measured_pr_count: 1 },
        kickoff_to_merge: { median_seconds: 10800, measured_pr_count: 1 },
      },
    });
  });

  it('breaks runs down by status, root or sub-run, and source (root runs only)', async () => {
    const byStatus = await get(`/factory/${factory}/metrics/run-breakdown?group_by=status&${DAY}`);
    // A was resumed by the follow-up: queued again.
    expect(byStatus).toMatchObject({
      total: 3,
      root_run_count: 2,
      groups: [
        { key: 'SUCCEEDED', total: 2 },
        { key: 'QUEUED', total: 1 },
      ],
    });
    const roots = await get(`/factory/${factory}/metrics/run-breakdown?group_by=root_vs_subrun&${DAY}`);
    expect(roots.groups).toEqual([
      { key: 'ROOT', total: 2 },
      { key: 'SUBRUN', total: 1 },
    ]);
    const bySource = await get(`/factory/${factory}/metrics/run-breakdown?group_by=source&${DAY}`);
    expect(bySource).toMatchObject({ total: 2, groups: [{ key: 'API', total: 2 }] });
    const byModel = await get(`/factory/${factory}/metrics/run-breakdown?group_by=model&${DAY}&group_by_period=day`);
    expect(byModel.groups).toEqual([
      { key: 'small', label: 'Small', total: 2, series: [2] },
      { key: 'big', label: 'Big', total: 1, series: [1] },
    ]);
    const csv = await t.call(
      'GET',
      `/factory/${factory}/metrics/run-breakdown?group_by=agent_type&${DAY}`,
      undefined,
      undefined,
      {
        accept: 'text/csv',
      },
    );
    expect(csv.body).toBe('key,label,total\r\nIMPLEMENT,IMPLEMENT,3\r\n');
  });
});

describe('GET /factory/{uid}/pull-requests', () => {
  it('lists the factory’s PRs newest opened first with their facts, interactions and cycle time', async () => {
    const body = await get(`/factory/${factory}/pull-requests`);
    expect(body.pull_requests.map((pr: { url: string }) => pr.url)).toEqual([PR2, PR1]);
    expect(body.pull_requests[1]).toEqual({
      provider: 'github',
      repo_full_name: 'acme/app',
      pr_number: 1,
      url: PR1,
      title: 'PR 1',
      author_login: 'shopfloor[bot]',
      factory_uid: factory,
      team_uid: t.teamUid,
      state: 'merged',
      opened_at: '2026-03-02T09:30:00.000Z',
      first_human_review_at: '2026-03-02T11:00:00.000Z',
      merged_at: '2026-03-02T12:00:00.000Z',
      closed_at: '2026-03-02T12:00:00.000Z',
      updated_at: '2026-03-02T12:00:00.000Z',
      first_seen_at: '2026-03-02T09:45:00.000Z',
      additions: 50,
      deletions: 10,
      changed_files: 1,
      num_commits: 1,
      human_interactions: {
        opened: 0,
        code_push: 0,
        review_approved: 1,
        review_changes_requested: 0,
        review_commented: 0,
        comment: 0,
        review_comment: 0,
        pr_action: 1,
        follow_up_message: 1,
        total: 3,
      },
      human_code_change: false,
      history_complete: true,
      runs: [{ run_id: runs.A, root_run_id: runs.A, created_at: '2026-03-02T09:00:00.000Z' }],
      kickoff_at: '2026-03-02T09:00:00.000Z',
      cycle_time: {
        kickoff_to_pr: 1800,
        pr_to_first_review: 5400,
        first_review_to_merge: 3600,
        kickoff_to_merge: 10800,
      },
    });
    expect(body.page_info).toEqual({ has_next_page: false, next_cursor: null });
  });

  it('filters by state, repository (any case) and times, and pages by cursor', async () => {
    const merged = await get(`/factory/${factory}/pull-requests?state=merged`);
    expect(merged.pull_requests.map((pr: { url: string }) => pr.url)).toEqual([PR1]);
    const repo = await get(`/factory/${factory}/pull-requests?repo=ACME/App&merged_after=2026-03-02T11:00:00Z`);
    expect(repo.pull_requests.map((pr: { url: string }) => pr.url)).toEqual([PR1]);
    const first = await get(`/factory/${factory}/pull-requests?limit=1`);
    expect(first.pull_requests.map((pr: { url: string }) => pr.url)).toEqual([PR2]);
    const next = await get(`/factory/${factory}/pull-requests?limit=1&cursor=${first.page_info.next_cursor}`);
    expect(next.pull_requests.map((pr: { url: string }) => pr.url)).toEqual([PR1]);
  });

  it('answers the page as CSV with a header row', async () => {
    const res = await t.call('GET', `/factory/${factory}/pull-requests?state=merged`, undefined, undefined, {
      accept: 'text/csv',
    });
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const [header, row, end] = res.body.split('\r\n');
    expect(header!.split(',').slice(0, 4)).toEqual(['url', 'provider', 'repo_full_name', 'pr_number']);
    expect(row!.startsWith(`${PR1},github,acme/app,1,PR 1,shopfloor[bot],merged,`)).toBe(true);
    expect(end).toBe('');
  });
});

describe('bad requests', () => {
  it('are 400 problems naming the parameter, and write nothing', async () => {
    const refused = async (url: string, param: string) => {
      const body = await expectRefused(t, () => t.call('GET', url), 400);
      expect(body.errors.map((e: { path: string }) => e.path)).toContain(param);
    };
    await refused(`/factory/${factory}/metrics?start_date=yesterday`, 'querystring.start_date');
    await refused(
      `/factory/${factory}/metrics?start_date=2026-03-02T00:00:00Z&end_date=2026-03-01T00:00:00Z`,
      'querystring.start_date',
    );
    await refused(`/factory/${factory}/metrics?group_by_period=year`, 'querystring.group_by_period');
    await refused(
      `/factory/${factory}/metrics?start_date=2025-01-01T00:00:00Z&end_date=2026-03-01T00:00:00Z&group_by_period=day`,
      'querystring.group_by_period',
    );
    // A range's work is the rows that tile it: over three years is refused before anything is read (issue #30).
    for (const route of ['metrics', 'costs/breakdown?group_by=user', 'costs/per-pr/top'])
      await refused(
        `/factory/${factory}/${route}${route.includes('?') ? '&' : '?'}start_date=1970-01-01T00:00:00Z&end_date=2026-03-01T00:00:00Z`,
        'querystring.start_date',
      );
    await refused(`/factory/${factory}/metrics/run-breakdown?group_by=colour`, 'querystring.group_by');
    await refused(`/factory/${factory}/metrics/run-breakdown`, 'querystring.group_by');
    await refused(`/factory/${factory}/costs/breakdown?group_by=status`, 'querystring.group_by');
    await refused(`/factory/${factory}/costs/per-pr/top?limit=51`, 'querystring.limit');
    await refused(`/factory/${factory}/pull-requests?limit=501`, 'querystring.limit');
    await refused(`/factory/${factory}/pull-requests?state=reopened`, 'querystring.state.0');
    const unknown = await expectRefused(
      t,
      () => t.call('GET', `/factory/${factory}/costs/per-pr/top?group_by_period=day`),
      400,
    );
    expect(unknown.detail).toBeTruthy();
    await expectRefused(
      t,
      () => t.call('GET', `/factory/${factory}/pull-requests?cursor=nonsense`),
      400,
      'invalid_cursor',
    );
  });

  it('are 404 for a factory the caller cannot see', async () => {
    const team = (await t.call('POST', '/teams', { name: 'Elsewhere' })).json();
    const outsider = (await t.addMember(team.uid, { email: 'outsider@example.com' })).api_key;
    for (const url of [
      `/factory/${factory}/metrics`,
      `/factory/${factory}/costs/breakdown?group_by=user`,
      `/factory/${factory}/pull-requests`,
      '/factory/no-such-factory/costs/per-pr',
    ])
      await expectRefused(t, () => t.call('GET', url, undefined, outsider), 404);
  });
});
