// @vitest-environment node
/**
 * The "Must hold", with three server processes (`node src/main.ts`) on one data directory:
 * the reference worker, behind a round-robin balancer so that its calls alternate between the
 * processes, executes runs; 100 deliveries to one webhook within a minute, spread over the
 * processes, get exactly 60 accepted; and a SIGKILL of the process owning the projector in the
 * middle of a stream of writes: another takes over, no acknowledged write is lost, every run is
 * executed once, and `projections verify` is clean afterwards.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RoundRobin, roundRobin } from './round-robin.js';
import {
  call,
  childEnv,
  makeDataDir,
  ownerPid,
  parseStatus,
  readEvents,
  removeDir,
  runCli,
  type ServerProcess,
  sleep,
  startServer,
  startWorker,
  type WorkerProcess,
} from './server-process.js';

/** The agent: notes each run it executes, once per execution. */
const SCRIPT = `echo "$SHOPFLOOR_RUN_ID" >> "$E2E_DIR/executed.log"; echo "did $SHOPFLOOR_PROMPT"`;
const EXTRA = {
  OWNERSHIP_LEASE_SECONDS: '2',
  WORKER_HEARTBEAT_SECONDS: '1',
  WORKER_LEASE_SECONDS: '3',
};
const DEADLINE_MS = 45_000;

let dataDir: string;
let servers: ServerProcess[] = [];
let proxy: RoundRobin;
let worker: WorkerProcess | null = null;
let agentKey: string;

const live = () => servers.filter((s) => s.process.exitCode === null && s.process.signalCode === null);

async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, ms = DEADLINE_MS) {
  for (const deadline = Date.now() + ms; ; await sleep(200)) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(
        `${what} did not happen in ${ms} ms; worker said:\n${(worker?.log() ?? '').slice(-4000)}\nservers said:\n${servers.map((s) => s.stderr().slice(-2000)).join('\n---\n')}`,
      );
  }
}

const executed = () =>
  fs.existsSync(path.join(dataDir, 'executed.log'))
    ? fs.readFileSync(path.join(dataDir, 'executed.log'), 'utf8').split('\n').filter(Boolean)
    : [];

const runsCreated = () => readEvents(dataDir, { prefix: 'run-' }).filter((e) => e.type === 'RunCreated');

/** Every run in the log has SUCCEEDED, read through each of `through`. */
async function allSucceeded(through: ServerProcess[]): Promise<string[]> {
  const ids = runsCreated().map((e) => String(e.data.run_id));
  return until(`all ${ids.length} runs succeeding`, async () => {
    for (const s of through)
      for (const id of ids) if ((await call(s, 'GET', `/agent/runs/${id}`)).body?.state !== 'SUCCEEDED') return null;
    return ids;
  });
}

beforeAll(async () => {
  dataDir = makeDataDir();
  // The first bootstraps the store and owns the projector; the others follow it.
  servers = [await startServer({ dataDir, extra: EXTRA })];
  servers.push(...(await Promise.all([1, 2].map(() => startServer({ dataDir, extra: EXTRA })))));
  proxy = await roundRobin(servers.map((s) => s.baseUrl));
  const agent = await call(servers[0]!, 'POST', '/agent/identities', { name: 'Roaming runner' });
  agentKey = String((await call(servers[1]!, 'POST', `/agent/identities/${agent.body!.uid}/api-keys`)).body!.api_key);
  worker = startWorker(['--exec', SCRIPT, '--url', proxy.url, '--concurrency', '3', '--host', 'roamer'], {
    ...childEnv({ dataDir }),
    SHOPFLOOR_API_KEY: agentKey,
    E2E_DIR: dataDir,
  });
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await proxy?.close();
  for (const s of servers) await s.stop();
  removeDir(dataDir);
});

describe.sequential('three processes on one data directory', () => {
  it('a worker whose calls alternate between the processes executes runs', async () => {
    expect(ownerPid(dataDir, 'projector')).toBe(servers[0]!.process.pid);
    for (const s of servers) expect((await fetch(`${s.baseUrl}/readyz`)).status).toBe(200);
    await until('the worker connecting', async () => {
      const listed = await call(servers[2]!, 'GET', '/agent/connected-self-hosted-workers');
      return (listed.body!.workers as Array<{ host: string }>).some((w) => w.host === 'roamer');
    });
    for (let i = 0; i < 6; i++) {
      const made = await call(servers[i % 3]!, 'POST', '/agent/runs', { prompt: `first ${i}` });
      expect(made.status).toBe(200);
    }
    const ids = await allSucceeded(servers);
    expect(ids).toHaveLength(6);
    expect(executed().sort()).toEqual([...ids].sort());
    // Its calls reached every process.
    for (const s of servers) expect(proxy.forwarded(s.baseUrl, '/api/v1/agent/workers')).toBeGreaterThan(3);
  });

  it('100 deliveries to one webhook within a minute, spread over the processes, get exactly 60 accepted', async () => {
    const factory = await call(servers[0]!, 'POST', '/factory', { name: 'Hooked' });
    const hook = await call(servers[1]!, 'POST', `/factory/${factory.body!.uid}/webhooks`, {
      name: 'busy',
      authMode: 'token',
    });
    expect(hook.status).toBe(201);
    const { uid, secret } = hook.body as { uid: string; secret: string };
    const statuses: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, async (_, j) => {
          const n = batch * 10 + j;
          const res = await fetch(`${servers[n % 3]!.baseUrl}/webhooks/w/${uid}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
            body: JSON.stringify({ n }),
          });
          await res.body?.cancel();
          return res.status;
        }),
      );
      statuses.push(...answers);
    }
    expect(statuses.filter((s) => s === 202)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40);
    const log = await call(servers[2]!, 'GET', `/factory/${factory.body!.uid}/webhooks/${uid}/deliveries?limit=100`);
    expect((log.body!.deliveries as Array<{ status: string }>).filter((d) => d.status === 'accepted')).toHaveLength(60);
  });

  it('SIGKILL of the projector owner mid-stream: another takes over, no acknowledged write is lost, every run is executed once, projections verify is clean', async () => {
    const owner = servers.find((s) => s.process.pid === ownerPid(dataDir, 'projector'))!;
    expect(owner).toBeDefined();
    const acknowledged: string[] = [];
    let killed = false;
    // Three writers, each going round the processes still alive; the owner dies after ten answers.
    const writer = async (w: number) => {
      for (let i = 0; i < 15; i++) {
        const targets = live();
        const target = targets[(w + i) % targets.length]!;
        const made = await call(target, 'POST', '/agent/runs', { prompt: `stream ${w}.${i}` }).catch(() => null);
        if (made?.status === 200) acknowledged.push(String(made.body!.run_id));
        if (acknowledged.length >= 10 && !killed) {
          killed = true;
          await owner.kill('SIGKILL');
        }
      }
    };
    await Promise.all([0, 1, 2].map(writer));
    expect(killed).toBe(true);
    const survivors = live();
    expect(survivors).toHaveLength(2);
    expect(acknowledged.length).toBeGreaterThan(30);

    // Another process took the projector, and every reactor, over from the checkpoints.
    const pids = survivors.map((s) => s.process.pid);
    await until('a survivor owning the projector', async () => pids.includes(ownerPid(dataDir, 'projector') ?? -1));
    await until('survivors owning every reactor', async () =>
      ['reactor_dispatched-task', 'reactor_automation-runs', 'worker_sweeper'].every((n) =>
        pids.includes(ownerPid(dataDir, n) ?? -1),
      ),
    );
    for (const s of survivors) expect((await fetch(`${s.baseUrl}/readyz`)).status).toBe(200);

    // No acknowledged run is lost: each is in the log and read through both survivors.
    const logged = new Set(runsCreated().map((e) => String(e.data.run_id)));
    for (const id of acknowledged) expect(logged.has(id), id).toBe(true);
    for (const s of survivors)
      for (const id of acknowledged) expect((await call(s, 'GET', `/agent/runs/${id}`)).status).toBe(200);

    // Every run in the log (acknowledged or not) ran exactly once, and succeeded.
    const ids = await allSucceeded(survivors);
    const counts = new Map<string, number>();
    for (const id of executed()) counts.set(id, (counts.get(id) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual([...ids].sort());
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const started = readEvents(dataDir, { prefix: 'run-' }).filter((e) => e.type === 'RunStarted');
    expect(started).toHaveLength(ids.length);

    const status = await runCli(['projections', 'status'], { dataDir });
    expect(status.code, status.stderr).toBe(0);
    const runs = parseStatus(status.stdout).find((r) => r.projection === 'runs') as Record<string, string>;
    expect(runs.owner).toMatch(new RegExp(`pid (${pids.join('|')})$`));
    expect(status.stdout).toMatch(new RegExp(`^reactor dispatched-task .* owner .* pid (${pids.join('|')})$`, 'm'));
    expect(status.stdout).toMatch(new RegExp(`^worker_sweeper: owned by .* pid (${pids.join('|')})$`, 'm'));

    // Quiet: the worker and the survivors stop, then every read model is checked against the log.
    await worker!.stop();
    for (const s of survivors) await s.stop();
    const verified = await runCli(['projections', 'verify'], { dataDir }, 60_000);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).not.toMatch(/differ|set aside/);
  }, 120_000);
});
