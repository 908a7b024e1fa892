// @vitest-environment node
/**
 * The "Must hold", with real processes: a server, and `shopfloor worker --exec` whose one
 * script is the agent (it reads the model from SHOPFLOOR_MODEL_ID and the task from its prompt, and
 * reports the tokens it used with `::usage::` lines) and the judge (it finds the answer the task's
 * success criteria ask for in the conversation). The candidate passes 9 of 10 tasks, the baseline
 * 3 of 10; the candidate's first try at task 1 fails and is retried. Results, costs (the tokens at
 * a price list with round numbers; machine and platform time free) and the significance verdict
 * come out as worked out by hand below.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roundPriceList } from '../helpers/scorer-fixtures.js';
import {
  call,
  childEnv,
  makeDataDir,
  removeDir,
  type ServerProcess,
  sleep,
  startServer,
  startWorker,
  type WorkerProcess,
} from './server-process.js';

const CANDIDATE = 'claude-4-6-opus-high';
const BASELINE = 'claude-4-6-sonnet';

let stateDir: string;
let pricesDir: string;
// `usage IN OUT`: the run's tokens so far, of the model it runs (a judge runs the default, Sonnet).
const script = () => `usage() {
  printf '::usage::{"model_token_usage":[{"model_id":"%s","total_tokens":%s,"tokens_by_category":{"input":%s,"output":%s}}]}\\n' "$SHOPFLOOR_MODEL_ID" $(($1 + $2)) "$1" "$2"
}
if [ "$SHOPFLOOR_RUN_KIND" = judge ]; then
  want=$(grep -o 'OK-[0-9]*' "$SHOPFLOOR_JUDGE_RUBRIC_FILE" | head -n 1)
  usage 1000 0
  if grep -q "ANSWER=$want;" "$SHOPFLOOR_JUDGE_CONVERSATION_FILE"; then c=pass; else c=fail; fi
  printf '{"classification":"%s","reasoning":"looked for %s"}\\n' "$c" "$want"
  exit 0
fi
n=$(printf '%s' "$SHOPFLOOR_PROMPT" | sed -n 's/.*task-\\([0-9]*\\).*/\\1/p')
if [ "$SHOPFLOOR_MODEL_ID" = ${CANDIDATE} ]; then limit=9; input=1000; output=200; else limit=3; input=30000; output=4000; fi
if [ "$SHOPFLOOR_MODEL_ID" = ${CANDIDATE} ] && [ "$n" = 1 ] && [ ! -e "${stateDir}/retried" ]; then
  touch "${stateDir}/retried"
  usage 1000 0
  echo "flaky start"; exit 1
fi
usage $input $output
if [ "$n" -le "$limit" ]; then echo "ANSWER=OK-$n;"; else echo "ANSWER=unsure;"; fi`;

const DEADLINE_MS = 120_000;

let dataDir: string;
let server: ServerProcess;
let worker: WorkerProcess | null = null;

async function until<T>(what: string, check: () => Promise<T | null | undefined | false>): Promise<T> {
  for (const deadline = Date.now() + DEADLINE_MS; ; await sleep(200)) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(
        `${what} did not happen; worker said:\n${(worker?.log() ?? '').slice(-5000)}\nserver said:\n${server.stderr()}`,
      );
  }
}

beforeAll(async () => {
  dataDir = makeDataDir();
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-bench-state-'));
  pricesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-bench-prices-'));
  server = await startServer({
    dataDir,
    extra: { WORKER_HEARTBEAT_SECONDS: '1', MODELS_FILE: roundPriceList(pricesDir) },
  });
});

afterAll(async () => {
  await worker?.stop();
  await server?.stop();
  removeDir(dataDir);
  removeDir(stateDir);
  removeDir(pricesDir);
});

describe('a benchmark run executed by the reference worker', () => {
  it('judges 9 of 10 against 3 of 10, costs every trial, retries the flaky one, and calls the difference significant', async () => {
    const factory = (await call(server, 'POST', '/factory', { name: 'Widgets' })).body!.uid as string;
    const agent = await call(server, 'POST', '/agent/identities', {
      name: 'Implementer',
      agent_type: 'IMPLEMENT',
      factory_uid: factory,
    });
    const key = await call(server, 'POST', `/agent/identities/${agent.body!.uid}/api-keys`);
    const tasks = Array.from({ length: 10 }, (_, i) => ({
      title: `Task ${i + 1}`,
      prompt: `Solve task-${i + 1} and print the answer`,
      success_criteria: `The agent prints ANSWER=OK-${i + 1}; exactly`,
    }));
    const suite = await call(server, 'POST', `/factory/${factory}/benchmarks`, {
      name: 'Ten tasks',
      agent_uid: agent.body!.uid,
      tasks,
      configurations: [
        { role: 'baseline', display_name: 'Sonnet', model: BASELINE },
        { role: 'candidate', display_name: 'Opus', model: CANDIDATE },
      ],
    });
    expect(suite.status, JSON.stringify(suite.body)).toBe(201);
    const launched = await call(server, 'POST', `/factory/${factory}/benchmarks/${suite.body!.uid}/runs`, {
      repetition_count: 1,
    });
    expect(launched.status, JSON.stringify(launched.body)).toBe(201);
    const runUrl = `/factory/${factory}/benchmarks/${suite.body!.uid}/runs/${launched.body!.uid}`;

    worker = startWorker(['--exec', script(), '--url', server.baseUrl, '--concurrency', '4'], {
      ...childEnv({ dataDir }),
      SHOPFLOOR_API_KEY: String(key.body!.api_key),
    });

    await until(
      'the benchmark run completed',
      async () => (await call(server, 'GET', runUrl)).body!.state === 'completed',
    );
    type Figures = { metrics: { cost_usd: number; scoring_cost_usd: number } };
    const results = (await call(server, 'GET', `${runUrl}/results`)).body as {
      configurations: Figures[];
      run_metrics: { total_cost_usd: number; total_credits: string };
      comparisons: [{ p_value: number }];
      trial_progress: unknown;
      score_progress: unknown;
    };
    expect(results).toMatchObject({ run_state: 'completed', provisional: false });
    const [baseline, candidate] = results.configurations as [Figures, Figures];
    expect(baseline).toMatchObject({ role: 'baseline', scoring: { pass_count: 3, fail_count: 7, pass_rate: 0.3 } });
    expect(candidate).toMatchObject({
      role: 'candidate',
      scoring: { pass_count: 9, fail_count: 1, pass_rate: 0.9 },
      retry_count: 1,
      retried_trial_count: 1,
    });
    // Costs, by hand, per million tokens Sonnet $1 in and $5 out, Opus $10 and $50: the baseline's
    // 10 trials at 30,000 + 4,000 Sonnet tokens ($0.03 + $0.02 = $0.05); the candidate's 10 at
    // 1,000 + 200 Opus tokens ($0.01 + $0.01 = $0.02) plus its failed first try at task 1 (1,000 in:
    // $0.01); 20 judges at 1,000 Sonnet tokens in ($0.001). $0.73 is 73 credits at $0.01.
    expect(baseline.metrics.cost_usd).toBeCloseTo(0.5, 9);
    expect(candidate.metrics.cost_usd).toBeCloseTo(0.21, 9);
    expect(baseline.metrics.scoring_cost_usd).toBeCloseTo(0.01, 9);
    expect(candidate.metrics.scoring_cost_usd).toBeCloseTo(0.01, 9);
    expect(results.run_metrics.total_cost_usd).toBeCloseTo(0.73, 9);
    expect(results.run_metrics.total_credits).toBe('73');
    // Fisher's exact test, two-sided: p = (1,200 + 45 + 1,200 + 45) / C(20,12) = 2,490 / 125,970.
    expect(results.comparisons[0]).toMatchObject({
      verdict: 'candidate_better',
      significant: true,
      alpha: 0.05,
      candidate: { pass_count: 9, trial_count: 10 },
      baseline: { pass_count: 3, trial_count: 10 },
    });
    expect(results.comparisons[0].p_value).toBeCloseTo(2490 / 125970, 12);
    expect(results.trial_progress).toMatchObject({ total: 20, succeeded: 20, completed: 20 });
    expect(results.score_progress).toMatchObject({ scored: 20, judging: 0, finished_unscored: 0 });
  });
});
