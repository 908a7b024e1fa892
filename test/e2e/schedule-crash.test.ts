// @vitest-environment node
/**
 * Schedules across crashes: a real server fires five `@every 1s` schedules, is killed with
 * SIGKILL in the middle of it twice and started again. Every due time is then accounted for
 * exactly once: fired with exactly one run, or recorded as skipped while the server was down.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { call, makeDataDir, readEvents, removeDir, type ServerProcess, sleep, startServer } from './server-process.js';

const SCHEDULES = 5;
const dataDir = makeDataDir();
const servers: ServerProcess[] = [];
const start = async () => {
  // A killed process's leases (the scheduler's among them) are taken over after one second.
  const s = await startServer({ dataDir, extra: { OWNERSHIP_LEASE_SECONDS: '1' } });
  servers.push(s);
  return s;
};

afterAll(async () => {
  await Promise.all(servers.map((s) => s.kill('SIGKILL')));
  removeDir(dataDir);
});

type Fired = { id: string; due_at: string; run_id: string; skipped_count: number };

describe('schedules and SIGKILL', () => {
  it('fire every due time exactly once, with exactly one run each, across crashes', { timeout: 60_000 }, async () => {
    let server = await start();
    const ids: string[] = [];
    for (let i = 0; i < SCHEDULES; i++) {
      const res = await call(server, 'POST', '/agent/schedules', {
        name: `tick ${i}`,
        cron_schedule: '@every 1s',
        prompt: 'tick',
      });
      expect(res.status).toBe(201);
      ids.push(String(res.body!.id));
    }
    for (const pause of [2_500, 1_700]) {
      await sleep(pause);
      await server.kill('SIGKILL'); // in the middle of firings and of the runs they start
      await sleep(1_200); // due times pass while nothing runs
      server = await start();
    }
    await sleep(2_000);
    for (const id of ids) expect((await call(server, 'POST', `/agent/schedules/${id}/pause`)).status).toBe(200);

    const fired = readEvents(dataDir, { prefix: 'schedule-' })
      .filter((e) => e.type === 'ScheduleFired')
      .map((e) => e.data as unknown as Fired);
    expect(fired.length).toBeGreaterThanOrEqual(SCHEDULES * 3);
    for (const id of ids) {
      const own = fired.filter((f) => f.id === id);
      // Due times only move forward; with the ones skipped between, they cover every second once.
      for (let k = 1; k < own.length; k++) {
        const gap = Date.parse(own[k]!.due_at) - Date.parse(own[k - 1]!.due_at);
        expect(gap).toBe((own[k]!.skipped_count + 1) * 1000);
      }
      // Each firing has its run, and no run was started twice.
      const runs = await waitForRuns(server, id, own.length);
      expect(runs.map((r) => r.run_id).sort()).toEqual(own.map((f) => f.run_id).sort());
    }
    const created = readEvents(dataDir, { prefix: 'run-' }).filter((e) => e.type === 'RunCreated');
    expect(new Set(created.map((e) => e.stream)).size).toBe(created.length);
    expect(created).toHaveLength(fired.length);
  });
});

async function waitForRuns(server: ServerProcess, scheduleId: string, count: number) {
  for (const deadline = Date.now() + 15_000; ; await sleep(200)) {
    const res = await call(server, 'GET', `/agent/runs?schedule_id=${scheduleId}&limit=500`);
    const runs = res.body!.runs as Array<{ run_id: string }>;
    if (runs.length >= count || Date.now() > deadline) return runs;
  }
}
