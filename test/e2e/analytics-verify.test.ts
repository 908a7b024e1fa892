// @vitest-environment node
/**
 * A rebuild gives the same dollars: a history made through a real server (runs executed through
 * the worker protocol, sub-runs, conversations continued, cancellations, GitHub deliveries), with
 * a price change in the middle of it (the server restarted on a new MODELS_FILE), then
 * `shopfloor projections verify` finds no difference in any read model, and `shopfloor export`
 * writes the rollups as JSON lines and CSV.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sign as signGithub } from '@octokit/webhooks-methods';
import { afterAll, describe, expect, it } from 'vitest';
import { priceListFile } from '../helpers/analytics-fixtures.js';
import { makeDataDir, removeDir, runCli, type ServerProcess, startServer } from './server-process.js';

const dataDir = makeDataDir();
const pricesDir = makeDataDir();
const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.kill('SIGKILL')));
  removeDir(dataDir);
  removeDir(pricesDir);
});

async function request(
  server: ServerProcess,
  method: string,
  url: string,
  body?: unknown,
  key = server.apiKey,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${server.baseUrl}${url.startsWith('/webhooks') ? '' : '/api/v1'}${url}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

interface Setup {
  factory: string;
  agent: string;
  key: string;
  hook: { uid: string; secret: string };
}

/** Runs `count` runs of the factory through the worker protocol; every fifth is a sub-run, every seventh continues a conversation, every sixth is cancelled. */
async function history(server: ServerProcess, s: Setup, count: number, tag: string): Promise<string[]> {
  const worker = (await request(server, 'POST', '/agent/workers', { host: `worker-${tag}` }, s.key)).worker_id;
  const made: Array<{ run_id: string; conversation_id: string }> = [];
  for (let i = 0; i < count; i++) {
    const parent = i % 5 === 4 ? made.at(-1) : undefined;
    const continued = i % 7 === 6 ? made[0] : undefined;
    const run = await request(server, 'POST', '/agent/runs', {
      prompt: `Task ${tag}-${i}`,
      agent_identity_uid: s.agent,
      config: { model_id: i % 3 ? 'small' : 'big', ...(i % 4 ? {} : { runner_id: 'big-box' }) },
      ...(parent ? { parent_run_id: parent.run_id } : {}),
      ...(continued ? { conversation_id: continued.conversation_id } : {}),
    });
    made.push(run);
    let execution: string | null = null;
    while (!execution) {
      const claimed = await request(server, 'POST', `/agent/workers/${worker}/claim`, undefined, s.key);
      if (claimed?.run.run_id === run.run_id) execution = claimed.run.execution_id;
    }
    const report = (what: string, body?: unknown) =>
      request(server, 'POST', `/agent/workers/${worker}/runs/${run.run_id}/${what}`, body, s.key, {
        'x-execution-id': execution!,
      });
    await report('claim');
    await report('start');
    await report('usage', {
      model_token_usage: [
        {
          model_id: i % 3 ? 'small' : 'big',
          total_tokens: 1000 * (i + 1),
          tokens_by_category: { input: 600 * (i + 1), input_cache_read: 300 * (i + 1), output: 100 * (i + 1) },
        },
      ],
    });
    const pr = `https://github.com/acme/app/pull/${tag === 'before' ? i % 4 : 10 + (i % 4)}`;
    await report('artifacts', { artifact_type: 'PULL_REQUEST', url: pr, branch: `fix-${i % 4}` });
    if (i % 6 === 5) await request(server, 'POST', `/agent/runs/${run.run_id}/cancel`);
    else await report('finish', { state: i % 4 ? 'SUCCEEDED' : 'FAILED' });
    if (i % 4 === 0) {
      const body = JSON.stringify({
        action: i % 8 ? 'opened' : 'closed',
        pull_request: {
          html_url: pr,
          number: Number(pr.split('/').pop()),
          title: `PR ${tag} ${i}`,
          user: { login: 'shopfloor[bot]', type: 'Bot' },
          state: i % 8 ? 'open' : 'closed',
          merged: !(i % 8),
          created_at: new Date().toISOString(),
          updated_at: new Date().toISOString(),
          merged_at: i % 8 ? null : new Date().toISOString(),
          closed_at: i % 8 ? null : new Date().toISOString(),
          additions: 10 * i,
          deletions: i,
          changed_files: 1,
          commits: 1,
          head: { ref: `fix-${i % 4}`, sha: `sha-${tag}-${i}` },
        },
        repository: { full_name: 'acme/app' },
        sender: { login: i % 8 ? 'shopfloor[bot]' : 'ada', type: i % 8 ? 'Bot' : 'User' },
      });
      await request(server, 'POST', `/webhooks/w/${s.hook.uid}`, body, null, {
        'x-hub-signature-256': await signGithub(s.hook.secret, body),
      });
    }
  }
  return made.map((r) => r.run_id);
}

describe.sequential('analytics across a price change', () => {
  let setup: Setup;
  let before: string[] = [];

  it('prices usage at the catalogue in force when it was reported', { timeout: 120_000 }, async () => {
    const first = await startServer({ dataDir, extra: { MODELS_FILE: priceListFile(pricesDir) } });
    servers.push(first);
    const factory = (
      await request(first, 'POST', '/factory', { name: 'Verify', repositories: [{ owner: 'acme', repo: 'app' }] })
    ).uid;
    const agent = (await request(first, 'POST', '/agent/identities', { name: 'Builder', factory_uid: factory })).uid;
    const key = (await request(first, 'POST', `/agent/identities/${agent}/api-keys`)).api_key;
    const secret = 'github-secret';
    const hook = (
      await request(first, 'POST', `/factory/${factory}/webhooks`, {
        name: 'github',
        authMode: 'signature',
        signatureScheme: 'github',
        secret,
      })
    ).uid;
    setup = { factory, agent, key, hook: { uid: hook, secret } };
    before = await history(first, setup, 14, 'before');
    await first.stop();

    // The operator raises the price of small input tokens from $1 to $2 a million.
    const second = await startServer({ dataDir, extra: { MODELS_FILE: priceListFile(pricesDir, { smallInput: 2 }) } });
    servers.push(second);
    const after = await history(second, setup, 14, 'after');
    // Run 1 of each half: 1,200 small input tokens, 600 cache reads and 200 output tokens.
    const usageOf = async (run: string) => (await request(second, 'GET', `/agent/runs/${run}`)).request_usage;
    expect((await usageOf(before[1]!)).inference_cost_breakdown_usd.input_cost_usd).toBe(0.0012);
    expect((await usageOf(after[1]!)).inference_cost_breakdown_usd.input_cost_usd).toBe(0.0024);
    const costs = await request(second, 'GET', `/factory/${factory}/costs/breakdown?group_by=model`);
    expect(costs.total.total).toBeGreaterThan(0);
    await second.stop();
  });

  it('shopfloor projections verify finds no difference in any read model', { timeout: 120_000 }, async () => {
    const verified = await runCli(
      ['projections', 'verify'],
      { dataDir, extra: { MODELS_FILE: priceListFile(pricesDir, { smallInput: 2 }) } },
      100_000,
    );
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/factory_rollups/);
    expect(verified.stdout).toMatch(/pull_requests/);
  });

  it('shopfloor export writes a read model as JSON lines or CSV', { timeout: 60_000 }, async () => {
    const jsonl = await runCli(['export', 'factory_rollups', '--format', 'jsonl'], { dataDir });
    expect(jsonl.code, jsonl.stderr).toBe(0);
    const rows = jsonl.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const days = rows.filter((r) => r.grain === 'day' && r.factory_uid === setup.factory);
    expect(days.length).toBeGreaterThan(0);
    expect(days.reduce((s, r) => s + r.runs.total, 0)).toBe(28);

    const out = path.join(dataDir, 'prs.csv');
    const csv = await runCli(['export', 'pull_requests', '--format', 'csv', '--out', out], { dataDir });
    expect(csv.code, csv.stderr).toBe(0);
    const [header, ...lines] = fs.readFileSync(out, 'utf8').trim().split('\r\n');
    expect(header!.split(',')).toEqual(expect.arrayContaining(['id', 'url', 'cost.total', 'human_interactions.total']));
    expect(lines).toHaveLength(8); // PRs 0-3 before the change, 10-13 after
    const bad = await runCli(['export', 'no_such_model'], { dataDir });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/factory_rollups/);
  });
});
