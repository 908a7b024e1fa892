// @vitest-environment node
/**
 * Issue #33's "Must hold", end to end: the server (`npm start`) and the reference worker
 * (`shopfloor worker --exec`) as real processes. The agent reports usage worth $3 and then waits;
 * the team's per-run cap is $2, so the server prices the report, cancels the run, and the worker,
 * told as with any cancel, ends the command. Then `projections verify` is clean.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { priceListFile } from '../helpers/analytics-fixtures.js';
import {
  call,
  childEnv,
  makeDataDir,
  readEvents,
  removeDir,
  runCli,
  type ServerProcess,
  untilWithLogs,
  startServer,
  startWorker,
  type WorkerProcess,
} from './server-process.js';

/** Reports 0.3 M input tokens of `big` ($10 a million: $3), then waits on its stdin until stopped. */
const SCRIPT = `echo $$ > "$E2E_DIR/agent.pid"
echo '::usage::{"model_token_usage":[{"model_id":"big","usage_type":"warp","total_tokens":300000,"tokens_by_category":{"input":300000}}]}'
while read line; do echo "got: $line"; done`;

const DEADLINE_MS = 20_000;
let dataDir: string;
let server: ServerProcess;
let worker: WorkerProcess | null = null;

const until = <T>(what: string, check: () => Promise<T | null | undefined | false>) =>
  untilWithLogs(what, check, () => ({ server, worker }), DEADLINE_MS);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  dataDir = makeDataDir();
  const prices = priceListFile(dataDir);
  server = await startServer({ dataDir, via: 'npm', extra: { WORKER_HEARTBEAT_SECONDS: '1', MODELS_FILE: prices } });
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await server?.stop();
  removeDir(dataDir);
});

describe('a per-run cap', () => {
  it('cancels a running run from its reported usage, and the worker ends its command', async () => {
    const team = ((await call(server, 'GET', '/teams')).body!.teams as Array<{ uid: string }>)[0]!.uid;
    const budget = await call(server, 'PUT', `/teams/${team}/budget`, { monthly_usd: 50, per_run_usd: 2 });
    expect(budget.status).toBe(200);
    const agent = await call(server, 'POST', '/agent/identities', { name: 'Spender' });
    const key = await call(server, 'POST', `/agent/identities/${agent.body!.uid}/api-keys`);
    worker = startWorker(['--exec', SCRIPT, '--url', server.baseUrl, '--host', 'capped-box'], {
      ...childEnv({ dataDir }),
      SHOPFLOOR_API_KEY: String(key.body!.api_key),
      E2E_DIR: dataDir,
    });
    const created = await call(server, 'POST', '/agent/runs', { prompt: 'Spend a lot', config: { model_id: 'big' } });
    expect(created.status).toBe(200);
    const runId = String(created.body!.run_id);

    const pidFile = path.join(dataDir, 'agent.pid');
    const pid = await until(
      'the agent starting',
      async () => fs.existsSync(pidFile) && Number(fs.readFileSync(pidFile, 'utf8')),
    );
    const run = await until('the run being cancelled', async () => {
      const res = await call(server, 'GET', `/agent/runs/${runId}`);
      return res.body!.state === 'CANCELLED' && res.body!;
    });
    expect(run.request_usage).toMatchObject({ inference_cost_usd: 3 });
    await until('the agent command ending', async () => !alive(pid));
    const cancelled = readEvents(dataDir, { stream: `run-${runId}` }).find((e) => e.type === 'RunCancelled');
    expect(cancelled?.data.reason).toBe('the run passed its per-run budget cap ($3 of $2)');

    const spent = await until('the spend settling', async () => {
      const res = await call(server, 'GET', `/teams/${team}/budget`);
      return res.body!.reserved_usd === 0 && res.body!;
    });
    expect(spent.spent_usd).toBeGreaterThanOrEqual(3);

    await worker.stop();
    worker = null;
    await server.stop();
    const verified = await runCli(['projections', 'verify'], { dataDir }, 60_000);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).not.toMatch(/differ|set aside/);
  }, 90_000);
});
