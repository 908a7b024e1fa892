/**
 * 7. Several processes on one store: the same commands and queries against one, two and three
 * server processes on one data directory, with the load spread evenly over them, and the CPU time
 * each process spends, per request and per event. One process owns the projector (and the
 * reactors); the others follow its checkpoints. A last phase per configuration sends the commands
 * to the followers only, so the owner's CPU time is the projecting alone: what every process spent
 * per event before, when each ran every projector.
 *
 * The ceiling of each configuration is what the machine's two cores could serve at the CPU time a
 * request cost in that configuration (all the servers and the load generator together), measured
 * in the same phase: 2 s of CPU a second, divided by the CPU seconds per request.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { STAGES, type Stage } from '../../commands/task/events.js';
import { params, QUICK } from '../lib/config.js';
import { fmt, log, pct } from '../lib/measure.js';
import { cachedReactedHistory } from '../lib/reacted-history.js';
import { copyHistory } from '../lib/seed.js';
import {
  authHeaders,
  type LoadCase,
  type LoadResult,
  measure,
  type Server,
  startServer,
  warmUp,
} from '../lib/server.js';
import { tempDir } from '../lib/tmp.js';
import type { Figure, Workload } from '../lib/workload.js';

const RUNS = Number(process.env.BENCH_SCALE_RUNS ?? (QUICK ? 2_000 : 30_000));
const TASKS = Number(process.env.BENCH_SCALE_TASKS ?? (QUICK ? 1_000 : 20_000));
const CORES = 2;
const TICK_MS = 1000 / 100; // USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s on Linux

/** CPU time of a process so far, in ms (all its threads: the checkpointer's too). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop()!.trim().split(' ');
  // After the command name: state is field 3, utime 14 and stime 15 (1-based, as proc(5) counts).
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

const benchCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

function headOf(dir: string): number {
  const db = new Database(path.join(dir, 'events.db'), { readonly: true, fileMustExist: true });
  try {
    return Number(db.prepare('SELECT max(position) FROM events').pluck().get() ?? 0);
  } finally {
    db.close();
  }
}

/** The pid of the process owning the projector; null when the server keeps no leases (an older release, BENCH_SERVER_ENTRY). */
function projectorOwnerPid(dir: string): number | null {
  const db = new Database(path.join(dir, 'read.db'), { readonly: true, fileMustExist: true });
  try {
    if (!db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'ownership'`).get()) return null;
    const doc = db.prepare(`SELECT json(doc) FROM ownership WHERE id = 'projector'`).pluck().get() as
      | string
      | undefined;
    const lease = doc ? (JSON.parse(doc) as { holder: string | null; pid: number }) : null;
    return lease?.holder ? lease.pid : null;
  } finally {
    db.close();
  }
}

interface Phase {
  /** Throughput over all the processes that took load. */
  rps: number;
  p99: number;
  failures: number;
  requests: number;
  events: number;
  seconds: number;
  /** CPU ms over the phase: each server (owner first), and the load generator. */
  ownerCpu: number;
  followerCpu: number[];
  benchCpu: number;
}

const totalCpu = (p: Phase) => p.ownerCpu + p.followerCpu.reduce((a, b) => a + b, 0) + p.benchCpu;
/** What two cores could serve at this phase's CPU time per request. */
const ceilingOf = (p: Phase) => (CORES * 1000) / (totalCpu(p) / p.requests);
const usPerEvent = (ms: number, p: Phase) => (p.events ? (ms * 1000) / p.events : NaN);

/** Loads `targets` at once, `connections` spread over them, and measures what every server spent. */
async function phase(
  dir: string,
  owner: Server,
  followers: Server[],
  targets: Server[],
  c: LoadCase | LoadCase[],
): Promise<Phase> {
  const per = Math.max(1, Math.round(params.httpConnections / targets.length));
  await Promise.all(targets.map((s) => warmUp(s.base, c, params.httpSeconds, per)));
  const cpu0 = [owner, ...followers].map((s) => cpuMs(s.proc.pid));
  const bench0 = benchCpuMs();
  const head0 = headOf(dir);
  const started = performance.now();
  const results: LoadResult[] = await Promise.all(targets.map((s) => measure(s.base, c, params.httpSeconds, per)));
  const seconds = (performance.now() - started) / 1000;
  const cpu = [owner, ...followers].map((s, i) => cpuMs(s.proc.pid) - cpu0[i]!);
  return {
    rps: results.reduce((n, r) => n + r.rps, 0),
    p99: Math.max(...results.map((r) => r.p99)),
    failures: results.reduce((n, r) => n + r.failures, 0),
    requests: results.reduce((n, r) => n + r.requests, 0),
    events: headOf(dir) - head0,
    seconds,
    ownerCpu: cpu[0]!,
    followerCpu: cpu.slice(1),
    benchCpu: benchCpuMs() - bench0,
  };
}

const workload: Workload = {
  title: '7. Several processes on one store',
  async run() {
    const { file, info } = await cachedReactedHistory('tasks-runs', RUNS, TASKS);
    const db = new Database(file, { readonly: true });
    const tasks = new Map<string, { factory: string; stage: Stage }>();
    for (const { type, data } of db
      .prepare(`SELECT type, data FROM events WHERE type IN ('TaskCreated', 'TaskStageChanged', 'TaskCancelled')`)
      .iterate() as Iterable<{ type: string; data: string }>) {
      const d = JSON.parse(data) as { uid: string; factory_uid: string; stage: Stage; to: Stage };
      if (type === 'TaskCreated') tasks.set(d.uid, { factory: d.factory_uid, stage: d.stage });
      else tasks.get(d.uid)!.stage = type === 'TaskCancelled' ? 'CANCELLED' : d.to;
    }
    db.close();
    const uids = [...tasks.keys()];
    const factories = [...new Set([...tasks.values()].map((t) => t.factory))];
    const any = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
    const taskPath = (uid: string) => `/api/v1/factory/${tasks.get(uid)!.factory}/tasks/${uid}`;
    const command: LoadCase = {
      method: 'PATCH',
      path: taskPath(uids[0]!),
      headers: authHeaders,
      vary: () => {
        const uid = any(uids);
        const task = tasks.get(uid)!;
        task.stage = STAGES[(STAGES.indexOf(task.stage) + 1) % STAGES.length]!;
        return { path: taskPath(uid), body: JSON.stringify({ stage: task.stage }) };
      },
    };
    const queries: LoadCase[] = [
      {
        method: 'GET',
        path: taskPath(uids[0]!),
        headers: authHeaders,
        vary: () => ({ path: taskPath(any(uids)) }),
      },
      {
        method: 'GET',
        path: `/api/v1/factory/${factories[0]}/tasks?stage=IMPLEMENT&limit=20`,
        headers: authHeaders,
        vary: () => ({ path: `/api/v1/factory/${any(factories)}/tasks?stage=IMPLEMENT&limit=20` }),
      },
    ];

    const figures: Figure[] = [];
    const notes: string[] = [];
    const rows: string[] = [];
    for (const n of [1, 2, 3]) {
      const dir = tempDir(`processes-${n}`);
      copyHistory(file, dir);
      log(`${n} process(es) on one store: starting them (the first loads the read models)`);
      const servers: Server[] = [];
      try {
        // One after the other: the first to start takes the projector lease.
        for (let i = 0; i < n; i++) servers.push(await startServer(dir, `server-processes-${n}-${i}`));
        const ownerPid = projectorOwnerPid(dir);
        // A release without leases: every process projects; the first is called the owner.
        const owner = ownerPid === null ? servers[0]! : servers.find((s) => s.proc.pid === ownerPid);
        if (!owner) throw new Error(`no server owns the projector (lease holder pid ${ownerPid})`);
        const followers = servers.filter((s) => s !== owner);
        const idle0 = servers.map((s) => cpuMs(s.proc.pid));
        await new Promise((r) => setTimeout(r, 3000));
        const idle = servers.map((s, i) => (cpuMs(s.proc.pid) - idle0[i]!) / 3);

        const commands = await phase(dir, owner, followers, servers, command);
        const reads = await phase(dir, owner, followers, servers, queries);
        const label = `${n} process${n > 1 ? 'es' : ''}`;
        const lat = (p: Phase) => `p99 ${p.p99} ms${p.failures ? `, **${fmt(p.failures)} failed**` : ''}`;
        const cpuShare = (p: Phase) =>
          `CPU ${fmt(totalCpu(p) / p.seconds / 10)}% of one core in all (servers ${[p.ownerCpu, ...p.followerCpu].map((c) => fmt(c / p.seconds / 10)).join(' + ')}%, load generator ${fmt(p.benchCpu / p.seconds / 10)}%)`;
        figures.push({
          name: `Commands (PATCH a task's stage), ${label}, load spread over all`,
          value: commands.rps,
          unit: 'req/s',
          detail: `${lat(commands)}; ${fmt(commands.events)} events; ${cpuShare(commands)}; owner ${fmt(usPerEvent(commands.ownerCpu, commands))} µs CPU per event (serving its share and projecting all)`,
          ceiling: {
            name: `two cores at this phase's ${fmt((totalCpu(commands) / commands.requests) * 1000)} µs CPU per request`,
            value: ceilingOf(commands),
          },
        });
        figures.push({
          name: `Queries (a task by id, a task list page), ${label}, load spread over all`,
          value: reads.rps,
          unit: 'req/s',
          detail: `${lat(reads)}; ${cpuShare(reads)}`,
          ceiling: {
            name: `two cores at this phase's ${fmt((totalCpu(reads) / reads.requests) * 1000)} µs CPU per request`,
            value: ceilingOf(reads),
          },
        });
        if (followers.length) {
          const toFollowers = await phase(dir, owner, followers, followers, command);
          const ownerUs = usPerEvent(toFollowers.ownerCpu, toFollowers);
          const followerUs = toFollowers.followerCpu.map((c) => usPerEvent(c, toFollowers));
          figures.push({
            name: `Projecting: CPU time per event of the owner while only the followers take commands, ${label}`,
            value: ownerUs,
            unit: 'µs/event',
            detail: `${fmt(toFollowers.events)} events at ${fmt(toFollowers.rps)} req/s (${lat(toFollowers)}); each follower spent ${followerUs.map((u) => fmt(u)).join(' and ')} µs per event serving the commands (their answers wait on the owner's checkpoints); before single ownership every process also projected: ${fmt(n * ownerUs)} µs per event across ${n}, now ${fmt(ownerUs)}`,
          });
        }
        rows.push(
          `${label}: idle CPU ${idle.map((c) => `${fmt(c / 10, 1)}%`).join(', ')} of a core (owner first: lease renewals, the log watch, checkpoint reads).`,
        );
      } finally {
        for (const s of servers.reverse()) await s.proc.stop();
      }
    }
    const one = figures.filter((f) => f.name.includes(', 1 process,'));
    notes.push(
      `Servers: \`node --import tsx src/main.ts\`, started one after the other on a copy of a generated log of ${fmt(info.events)} events (bench/lib/history.ts \`tasks-runs\`: ${fmt(RUNS)} runs, ${fmt(TASKS)} tasks over ${factories.length} factories), SQLite stores in one data directory, LOG_LEVEL=${params.logLevel}. The first to start owns the projector and the reactors; the others follow the checkpoints it commits. Load: autocannon in the benchmark process, ${params.httpConnections} connections in all, split evenly over the processes that take load, ${params.httpSeconds} s per phase after a warm-up; CPU time from /proc/<pid>/stat (every thread of a server) and process.cpuUsage() (the load generator).`,
      `The ceiling: this machine has ${os.cpus().length} cores (${CORES} assumed), shared with other work (load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(
          ', ',
        )} at the end). A configuration cannot serve more than two cores' worth of its own CPU time per request, so each figure's ratio is the share of both cores the phase kept busy. One process runs its JavaScript on one core (plus SQLite's checkpointer thread), so it cannot use both; more processes can, up to the two cores, and no further: ${one.length ? `at one process the commands used ${pct(one[0]!.value / one[0]!.ceiling!.value)} and the queries ${pct(one[1]!.value / one[1]!.ceiling!.value)} of the two cores, so the gain from more processes is bounded by about ${fmt(one[0]!.ceiling!.value / one[0]!.value, 1)}× and ${fmt(one[1]!.ceiling!.value / one[1]!.value, 1)}×` : ''}, less what each added process costs (followers wait on the owner's checkpoints, every process reads the log for the worker registry). Commands are also bounded by the one SQLite writer: every append, from any process, takes the write lock of events.db and an fsync (synchronous=FULL), and each process groups only its own appends into one commit.`,
      `Projecting: while only the followers take commands, the owner serves nothing, so its CPU time per event is what projecting (and following the log) costs. Before single ownership every process ran every projector, at that cost each (the checkpoint compare-and-set kept it correct); now one does. To measure that directly, run this workload with BENCH_SERVER_ENTRY set to an older release's src/main.ts: without leases, every process projects (the first started is called the owner here).`,
      ...rows,
    );
    return { figures, notes };
  },
};
export default workload;
