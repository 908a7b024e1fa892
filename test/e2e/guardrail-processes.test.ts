// @vitest-environment node
/**
 * Issue #33's "Must hold" across processes: three servers (`node src/main.ts`) on one data
 * directory, and thirty concurrent starts spread over them against a team budget with room for
 * exactly ten runs (by their per-run cap): exactly ten start, twenty are refused 402
 * `budget_exceeded`, none 409 or 500, since the room is decided on the budget's period stream.
 * Then `projections verify` is clean after the refusals and a cancel.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, makeDataDir, readEvents, removeDir, runCli, type ServerProcess, startServer } from './server-process.js';

const EXTRA = { OWNERSHIP_LEASE_SECONDS: '2' };
let dataDir: string;
let servers: ServerProcess[] = [];

beforeAll(async () => {
  dataDir = makeDataDir();
  servers = [await startServer({ dataDir, extra: EXTRA })];
  servers.push(...(await Promise.all([1, 2].map(() => startServer({ dataDir, extra: EXTRA })))));
}, 60_000);

afterAll(async () => {
  for (const s of servers) await s.stop();
  removeDir(dataDir);
});

describe('a budget shared by three processes', () => {
  it('thirty concurrent starts with room for ten start exactly ten and refuse twenty', async () => {
    const team = ((await call(servers[0]!, 'GET', '/teams')).body!.teams as Array<{ uid: string }>)[0]!.uid;
    expect((await call(servers[1]!, 'PUT', `/teams/${team}/budget`, { monthly_usd: 10, per_run_usd: 1 })).status).toBe(
      200,
    );
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => call(servers[i % 3]!, 'POST', '/agent/runs', { prompt: `start ${i}` })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(20);
    for (const refused of answers.filter((a) => a.status === 402)) expect(refused.body!.code).toBe('budget_exceeded');
    const created = readEvents(dataDir, { prefix: 'run-' }).filter((e) => e.type === 'RunCreated');
    expect(created).toHaveLength(10);
    const period = readEvents(dataDir, { prefix: 'budgetperiod-' });
    expect(period.filter((e) => e.type === 'BudgetReserved')).toHaveLength(10);
    expect(period.filter((e) => e.type === 'BudgetRefused')).toHaveLength(20);
    for (const s of servers)
      expect((await call(s, 'GET', `/teams/${team}/budget`)).body).toMatchObject({
        reserved_usd: 10,
        remaining_usd: 0,
      });

    const first = String(answers.find((a) => a.status === 200)!.body!.run_id);
    expect((await call(servers[2]!, 'POST', `/agent/runs/${first}/cancel`)).status).toBe(200);
    for (const s of servers) await s.stop();
    const verified = await runCli(['projections', 'verify'], { dataDir }, 60_000);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).not.toMatch(/differ|set aside/);
  }, 120_000);
});
