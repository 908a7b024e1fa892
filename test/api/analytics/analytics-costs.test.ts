/**
 * Usage priced into costs through the real app: a worker's usage reports priced at the catalogue
 * in force when they happened, executions at the machine and platform rates, shown on the run's
 * `request_usage` and summed by the cost operations; whole run trees split across their PRs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import {
  bot,
  deliver,
  executeRun,
  githubHook,
  newWorker,
  person,
  priceListFile,
  settle,
  tokens,
  type Worker,
} from '../../helpers/analytics-fixtures.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-prices-'));
const modelsFile = priceListFile(dir);

const clock = manualClock('2026-03-02T09:00:00Z');
let t: TestApp;
let factory: string;
let worker: Worker;

beforeAll(async () => {
  t = await startTestApp({ MODELS_FILE: modelsFile }, clock);
  factory = (await t.call('POST', '/factory', { name: 'Pricing' })).json().uid;
  worker = await newWorker(t, factory);
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('request_usage', () => {
  it('prices tokens by model and category, machine time from claim to finish and platform time in progress', async () => {
    const runId = await executeRun(
      t,
      clock,
      worker,
      { config: { model_id: 'big', runner_id: 'big-box' }, agent_identity_uid: worker.agentUid },
      { created: '2026-03-02T09:00:00Z', claimed: '2026-03-02T09:01:00Z', started: '2026-03-02T09:02:00Z' },
      [
        {
          at: '2026-03-02T09:30:00Z',
          usage: tokens('big', { input: 100_000, input_cache_read: 200_000, output: 10_000 }),
        },
        // The next report replaces the one before: the run's usage so far.
        {
          at: '2026-03-02T09:50:00Z',
          usage: tokens('big', {
            input: 200_000,
            input_cache_read: 400_000,
            input_cache_write: 50_000,
            output: 25_000,
          }),
        },
        { at: '2026-03-02T10:02:00Z', finish: 'SUCCEEDED' },
      ],
    );
    await settle(t);
    const run = (await t.call('GET', `/agent/runs/${runId}`)).json();
    // big: 0.2 M input × $10 = 2, 0.4 M cache read × $1 = 0.4, 0.05 M cache write × $20 = 1, 0.025 M output × $40 = 1.
    // Machine: claim 09:01 to 10:02 = 61 min on big-box at $4/h; platform: 09:02 to 10:02 = 1 h at $0.5/h.
    expect(run.request_usage).toEqual({
      inference_cost: 440,
      compute_cost: 406.6666667,
      platform_cost: 50,
      inference_cost_usd: 4.4,
      compute_cost_usd: 4.066666667,
      platform_cost_usd: 0.5,
      total_tokens: 675_000,
      inference_cost_breakdown_usd: {
        input_cost_usd: 2,
        input_cache_read_cost_usd: 0.4,
        input_cache_write_cost_usd: 1,
        output_cost_usd: 1,
      },
      model_token_usage: [
        {
          model_id: 'big',
          usage_type: 'warp',
          total_tokens: 675_000,
          tokens_by_category: { input: 200_000, input_cache_read: 400_000, input_cache_write: 50_000, output: 25_000 },
        },
      ],
    });

    const breakdown = (
      await t.call(
        'GET',
        `/factory/${factory}/costs/breakdown?group_by=model&start_date=2026-03-02T00:00:00Z&end_date=2026-03-03T00:00:00Z`,
      )
    ).json();
    expect(breakdown.total).toEqual({ inference: 4.4, compute: 4.066667, platform: 0.5, total: 8.966667 });
    expect(breakdown.groups).toEqual([
      {
        key: 'big',
        label: 'Big',
        deleted: false,
        photo_url: null,
        dollars: { inference: 4.4, compute: 4.066667, platform: 0.5, total: 8.966667 },
      },
    ]);
  });
});

describe('the price list', () => {
  it('is served with the models: what time costs and what a credit is worth', async () => {
    const models = (await t.call('GET', '/agent/models')).json();
    expect(models.rates).toEqual({
      credit_price_usd: 0.01,
      compute_usd_per_hour: { default: 1, runners: { 'big-box': 4 } },
      platform_usd_per_hour: 0.5,
    });
  });
});

describe('pushes to a pull request’s branch', () => {
  it('count as a person’s code push on the open pull requests of that branch, a bot’s not', async () => {
    const hook = await githubHook(t, factory);
    const url = 'https://github.com/acme/app/pull/42';
    await executeRun(
      t,
      clock,
      worker,
      { agent_identity_uid: worker.agentUid },
      { created: '2026-03-05T09:00:00Z', claimed: '2026-03-05T09:00:00Z', started: '2026-03-05T09:00:00Z' },
      [
        { at: '2026-03-05T09:10:00Z', pr: { url, branch: 'feature-x' } },
        { at: '2026-03-05T09:20:00Z', finish: 'SUCCEEDED' },
      ],
    );
    const push = (branch: string, sha: string, sender: Record<string, string>) => ({
      ref: `refs/heads/${branch}`,
      before: 'a'.repeat(40),
      after: sha,
      commits: [{ id: sha }],
      head_commit: { id: sha, timestamp: '2026-03-05T10:00:00Z' },
      repository: { full_name: 'acme/app' },
      pusher: { name: sender.login },
      sender,
    });
    clock.set('2026-03-05T10:00:00Z');
    await deliver(t, hook, push('feature-x', 'b'.repeat(40), person('ada')));
    await deliver(t, hook, push('feature-x', 'c'.repeat(40), bot('dependabot[bot]')));
    await deliver(t, hook, push('other-branch', 'd'.repeat(40), person('ada')));
    await settle(t);
    const [pr] = (await t.call('GET', `/factory/${factory}/pull-requests`)).json().pull_requests;
    expect(pr).toMatchObject({ url, human_code_change: true, history_complete: false, state: null });
    expect(pr.human_interactions).toMatchObject({ code_push: 1, total: 1 });
  });
});
