/**
 * Histories for the analytics tests, made through the API on an injected clock: runs executed by
 * a worker through the worker protocol (claim, start, usage, artifacts, finish) at chosen times,
 * and GitHub webhook deliveries signed as GitHub signs them.
 */
import { v4 as uuidv4 } from 'uuid';
import fs from 'node:fs';
import path from 'node:path';
import { sign as signGithub } from '@octokit/webhooks-methods';
import { expect } from 'vitest';
import type { Clock } from '../../src/clock.js';
import type { TestApp } from './app.js';
import { eventually } from './task-fixtures.js';

type MovableClock = Clock & { set(to: Date | string): void };

/**
 * A price list with round numbers, as MODELS_FILE: `small` at $1/$0.5/$2/$4 and `big` at
 * $10/$1/$20/$40 per million input, cache-read, cache-write and output tokens; machine time $1 an
 * hour ($4 on the `big-box` runner), platform time $0.5 an hour, a credit $0.01.
 */
export function priceListFile(dir: string, changes: { smallInput?: number } = {}): string {
  const file = path.join(dir, 'models.yaml');
  fs.writeFileSync(
    file,
    `default_model_id: small
models:
  - { id: small, display_name: Small, provider: OPENAI, vision_supported: false, prices: { input: ${changes.smallInput ?? 1}, cache_read: 0.5, cache_write: 2, output: 4 } }
  - { id: big, display_name: Big, provider: ANTHROPIC, vision_supported: true, prices: { input: 10, cache_read: 1, cache_write: 20, output: 40 } }
rates:
  credit_price_usd: 0.01
  compute_usd_per_hour: { default: 1, runners: { big-box: 4 } }
  platform_usd_per_hour: 0.5
`,
  );
  return file;
}

/** Waits until the analytics reactors have passed every event written, and the read models show what they wrote. */
export async function settle(t: TestApp): Promise<void> {
  await eventually(async () => {
    const head = await t.rt.events.headPosition();
    for (const reactor of ['cost-ledger', 'pull-request-facts']) {
      const at = await t.rt.docs.readCheckpoint(`reactor_${reactor}`);
      if (!at || at.commit < head.commit) return undefined;
    }
    await t.rt.projector.waitFor(head);
    return (await t.rt.events.headPosition()).commit === head.commit ? true : undefined;
  });
}

export interface Worker {
  key: string;
  workerId: string;
  agentUid: string;
}

/** An agent of the caller's team (the admin's by default; linked to `factory`) with a key, announced as a worker. */
export async function newWorker(t: TestApp, factory: string | null, name = 'Builder', as?: string): Promise<Worker> {
  const agent = await t.call(
    'POST',
    '/agent/identities',
    { name, agent_type: 'IMPLEMENT', ...(factory ? { factory_uid: factory } : {}) },
    as,
  );
  expect(agent.statusCode, agent.body).toBe(201);
  const key = (await t.call('POST', `/agent/identities/${agent.json().uid}/api-keys`, undefined, as)).json()
    .api_key as string;
  const announced = await t.call('POST', '/agent/workers', { host: name }, key);
  expect(announced.statusCode, announced.body).toBe(201);
  return { key, workerId: announced.json().worker_id, agentUid: agent.json().uid };
}

export interface Step {
  /** When it happens. */
  at: string;
  /** What the worker reports: usage, a pull request, another artifact, the end. */
  usage?: Record<string, unknown>;
  pr?: { url: string; branch?: string };
  artifact?: Record<string, unknown>;
  finish?: 'SUCCEEDED' | 'FAILED';
}

/**
 * Creates a run (as `as`, the admin by default; `body` as POST /agent/runs takes it) at `created`,
 * which the worker claims at `claimed` and starts at `started`, then reports `steps`.
 */
export async function executeRun(
  t: TestApp,
  clock: MovableClock,
  worker: Worker,
  body: Record<string, unknown>,
  times: { created: string; claimed: string; started: string },
  steps: Step[],
  as?: string,
): Promise<string> {
  clock.set(times.created);
  const created = await t.call('POST', '/agent/runs', { prompt: 'Fix it', ...body }, as);
  expect(created.statusCode, created.body).toBe(200);
  const runId = created.json().run_id as string;
  clock.set(times.claimed);
  let executionId: string | null = null;
  for (let i = 0; i < 50 && executionId === null; i++) {
    const res = await t.call('POST', `/agent/workers/${worker.workerId}/claim`, undefined, worker.key);
    expect(res.statusCode, res.body).toBe(200);
    if (res.json().run.run_id === runId) executionId = res.json().run.execution_id;
  }
  const report = async (what: string, payload?: unknown) => {
    const res = await t.call('POST', `/agent/workers/${worker.workerId}/runs/${runId}/${what}`, payload, worker.key, {
      'x-execution-id': executionId!,
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  await report('claim');
  clock.set(times.started);
  await report('start');
  for (const step of steps) {
    clock.set(step.at);
    if (step.usage) await report('usage', step.usage);
    if (step.pr)
      await report('artifacts', { artifact_type: 'PULL_REQUEST', url: step.pr.url, branch: step.pr.branch ?? 'fix' });
    if (step.artifact) await report('artifacts', step.artifact);
    if (step.finish) await report('finish', { state: step.finish });
  }
  return runId;
}

/** Usage of one model by category, as a worker reports it. */
export const tokens = (model_id: string, byCategory: Record<string, number>) => ({
  model_token_usage: [
    {
      model_id,
      usage_type: 'warp',
      total_tokens: Object.values(byCategory).reduce((s, n) => s + n, 0),
      tokens_by_category: byCategory,
    },
  ],
});

export interface GithubHook {
  uid: string;
  factory: string;
  secret: string;
}

/** A `signature`/`github` webhook on the factory (made by `as`, the admin by default). */
export async function githubHook(t: TestApp, factory: string, as?: string): Promise<GithubHook> {
  const secret = 'github-webhook-secret';
  const res = await t.call(
    'POST',
    `/factory/${factory}/webhooks`,
    { name: 'github', authMode: 'signature', signatureScheme: 'github', secret },
    as,
  );
  expect(res.statusCode, res.body).toBe(201);
  return { uid: res.json().uid, factory, secret };
}

/** Delivers a GitHub event body to the hook, signed as GitHub signs it. */
export async function deliver(t: TestApp, hook: GithubHook, body: Record<string, unknown>): Promise<void> {
  const payload = JSON.stringify(body);
  const res = await t.app.inject({
    method: 'POST',
    url: `/webhooks/w/${hook.uid}`,
    payload,
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': await signGithub(hook.secret, payload),
      'x-github-delivery': `gh-${uuidv4()}`,
    },
  });
  expect(res.statusCode, res.body).toBe(202);
}

export const person = (login: string) => ({ login, type: 'User' });
export const bot = (login: string) => ({ login, type: 'Bot' });

/** A `pull_request` object as GitHub's webhooks carry it. */
export const pullRequest = (
  repo: string,
  number: number,
  fields: Partial<{
    title: string;
    user: Record<string, string>;
    state: 'open' | 'closed';
    draft: boolean;
    merged: boolean;
    created_at: string;
    updated_at: string;
    merged_at: string | null;
    closed_at: string | null;
    additions: number;
    deletions: number;
    changed_files: number;
    commits: number;
    head: string;
  }> = {},
) => ({
  html_url: `https://github.com/${repo}/pull/${number}`,
  number,
  title: fields.title ?? `PR ${number}`,
  user: fields.user ?? bot('shopfloor[bot]'),
  state: fields.state ?? 'open',
  draft: fields.draft ?? false,
  merged: fields.merged ?? false,
  created_at: fields.created_at ?? '2026-03-02T10:00:00Z',
  updated_at: fields.updated_at ?? fields.created_at ?? '2026-03-02T10:00:00Z',
  merged_at: fields.merged_at ?? null,
  closed_at: fields.closed_at ?? null,
  head: { ref: fields.head ?? 'fix', sha: 'abc' },
  ...(fields.additions !== undefined
    ? {
        additions: fields.additions,
        deletions: fields.deletions ?? 0,
        changed_files: fields.changed_files ?? 1,
        commits: fields.commits ?? 1,
      }
    : {}),
});
