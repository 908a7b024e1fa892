/**
 * Scorer tests' cast: a factory with agents of its own, their runs, and a worker that executes
 * them through the worker API (the way `shopfloor worker` does), answering judge runs with a
 * judgement of the test's choosing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { eventually } from './task-fixtures.js';

/**
 * A price list with round numbers, as MODELS_FILE, of the models these tests name: per million
 * input, cache-read, cache-write and output tokens, `claude-4-6-sonnet` (the default, so the
 * correctness judge's) $1, $0.1, $1 and $5, `claude-4-6-opus-high` $10, $1, $10 and $50,
 * `gpt-5-4-mini` $0.5, $0.05, $0.5 and $2; a credit is $0.01; machine time costs
 * `computeUsdPerHour` (0 unless given) and platform time nothing. Written into `dir`.
 */
export function roundPriceList(dir: string, { computeUsdPerHour = 0 } = {}): string {
  const file = path.join(dir, 'models.yaml');
  fs.writeFileSync(
    file,
    `default_model_id: claude-4-6-sonnet
models:
  - { id: claude-4-6-sonnet, display_name: Sonnet, provider: ANTHROPIC, vision_supported: true, prices: { input: 1, cache_read: 0.1, cache_write: 1, output: 5 } }
  - { id: claude-4-6-opus-high, display_name: Opus, provider: ANTHROPIC, vision_supported: true, prices: { input: 10, cache_read: 1, cache_write: 10, output: 50 } }
  - { id: gpt-5-4-mini, display_name: Mini, provider: OPENAI, vision_supported: true, prices: { input: 0.5, cache_read: 0.05, cache_write: 0.5, output: 2 } }
rates:
  credit_price_usd: 0.01
  compute_usd_per_hour: { default: ${computeUsdPerHour}, runners: {} }
  platform_usd_per_hour: 0
`,
  );
  return file;
}

export interface Assigned {
  run_id: string;
  execution_id: string;
  source: string;
  title: string;
  prompt: string;
  metadata: Record<string, string>;
  attachments: Array<{ file_name: string; mime_type: string; download_url: string }>;
}

/** An agent of the factory, with an API key for its workers. */
export async function factoryAgent(t: TestApp, factoryUid: string, name = 'Implementer') {
  const agent = await t.call('POST', '/agent/identities', { name, agent_type: 'IMPLEMENT', factory_uid: factoryUid });
  expect(agent.statusCode, agent.body).toBe(201);
  const key = await t.call('POST', `/agent/identities/${agent.json().uid}/api-keys`);
  expect(key.statusCode, key.body).toBe(201);
  return { uid: agent.json().uid as string, key: key.json().api_key as string };
}

/** A run the agent executes (its factory's, as the agent is linked to it). */
export async function agentRun(t: TestApp, agentUid: string, prompt = 'Add a changelog entry') {
  const res = await t.call('POST', '/agent/runs', { prompt, agent_identity_uid: agentUid });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().run_id as string;
}

export const CLASSIFICATIONS = [
  { value: 'compliant', score: 1, description: 'Did everything asked' },
  { value: 'partial', score: 0.5, description: null },
  { value: 'non_compliant', score: 0 },
];

export async function newScorer(t: TestApp, factoryUid: string, body: Record<string, unknown> = {}) {
  const res = await t.call('POST', `/factory/${factoryUid}/scorers`, {
    name: 'Task compliance',
    scoring_prompt: 'Did the agent do what the task asked, and run the tests before finishing?',
    model_id: 'claude-4-6-sonnet',
    threshold: 1,
    allowed_classifications: CLASSIFICATIONS,
    scope_mode: 'all_agents',
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { uid: string; version: number; [field: string]: unknown };
}

/** A worker of the team speaking the worker API with an agent's key. */
export function simulatedWorker(t: TestApp, key: string) {
  let workerId = '';
  const url = (runId: string, what: string) => `/agent/workers/${workerId}/runs/${runId}/${what}`;
  const report = async (run: Assigned, what: string, body?: unknown, status = [200, 201]) => {
    const res = await t.call('POST', url(run.run_id, what), body, key, { 'x-execution-id': run.execution_id });
    expect(status, `${what}: ${res.body}`).toContain(res.statusCode);
    return res;
  };
  const worker = {
    /** The id the server gave it when it announced itself. */
    get id() {
      return workerId;
    },
    async announce() {
      const res = await t.call('POST', '/agent/workers', { host: 'sim' }, key);
      expect(res.statusCode, res.body).toBe(201);
      workerId = res.json().worker_id;
      return worker;
    },
    /** Takes the next queued run of the team, if any. */
    async claim(): Promise<Assigned | null> {
      const res = await t.call('POST', `/agent/workers/${workerId}/claim`, undefined, key);
      if (res.statusCode === 204) return null;
      expect(res.statusCode, res.body).toBe(200);
      return res.json().run;
    },
    /** Waits for a queued run matching `match` (runs it does not want are left leased). */
    async claimWhere(match: (r: Assigned) => boolean): Promise<Assigned> {
      return eventually(async () => {
        const run = await worker.claim();
        return run && match(run) ? run : undefined;
      });
    },
    /** Claims, starts, says `text` as the agent, and finishes the run. */
    async execute(run: Assigned, text = 'Done: tests pass', state = 'SUCCEEDED') {
      await report(run, 'claim');
      await report(run, 'start');
      await report(run, 'messages', { role: 'assistant', content: [{ type: 'text', text }] });
      await report(run, 'finish', { state });
    },
    /** Takes up a judge run and answers it; returns the judgement's answer. */
    async judge(run: Assigned, classification: string, reasoning?: string, usage?: Record<string, unknown>) {
      await report(run, 'claim');
      await report(run, 'start');
      if (usage) await report(run, 'usage', usage);
      const res = await report(run, 'judgement', { classification, ...(reasoning ? { reasoning } : {}) }, [201]);
      await report(run, 'finish', { state: res.json().status === 'scored' ? 'SUCCEEDED' : 'FAILED' });
      return res.json() as { status: string; score: number | null; error: string | null };
    },
    report,
  };
  return worker;
}

/** The judge run of `runId`, once the reactor created it and a worker may claim it. */
export const judgeOf = (worker: ReturnType<typeof simulatedWorker>, runId: string) =>
  worker.claimWhere((r) => r.source === 'RUN_SCORER' && r.metadata.scored_run_id === runId);
