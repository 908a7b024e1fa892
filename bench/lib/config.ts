/**
 * Every knob of the benchmarks, from the environment. BENCH_QUICK=1 shrinks everything to a smoke
 * run (well under a minute) that only checks that the harness works; its figures mean nothing.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const QUICK = process.env.BENCH_QUICK === '1';

/** A positive number from `name`, else the full or the quick default. */
function num(name: string, full: number, quick: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return QUICK ? quick : full;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return value;
}

export const BENCH_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const ROOT_DIR = path.dirname(BENCH_DIR);
/** Generated event logs, CPU profiles and quick-run reports; gitignored. */
export const CACHE_DIR = path.join(BENCH_DIR, '.cache');

export const params = {
  /** 1. Event store append. */
  singleWriters: num('BENCH_APPEND_WRITERS', 64, 64),
  singleEvents: num('BENCH_APPEND_SINGLE_EVENTS', 200_000, 10_000),
  batchSize: num('BENCH_APPEND_BATCH_SIZE', 100, 100),
  batchEvents: num('BENCH_APPEND_BATCH_EVENTS', 1_000_000, 50_000),
  /** One fsync per event is slow: this case stops after this many milliseconds. */
  rawSingleRowMs: num('BENCH_RAW_SINGLE_ROW_MS', 5_000, 1_000),

  /** 2. Projection rebuild. */
  rebuildEvents: num('BENCH_REBUILD_EVENTS', 1_000_000, 20_000),
  /** Only these read models (comma-separated names), to profile one at a time. */
  rebuildProjections: process.env.BENCH_PROJECTIONS
    ? process.env.BENCH_PROJECTIONS.split(',').map((s) => s.trim())
    : null,

  /** 3. HTTP. */
  /** Runs of the HTTP history; `httpTasks` of them have a task, the rest are free for POST /factory/{uid}/tasks. */
  httpRuns: num('BENCH_HTTP_RUNS', 130_000, 4_000),
  httpTasks: num('BENCH_HTTP_TASKS', 100_000, 2_000),
  httpSeconds: num('BENCH_HTTP_SECONDS', 10, 1),
  httpConnections: num('BENCH_HTTP_CONNECTIONS', 50, 50),
  /** Only the HTTP cases whose name contains this (e.g. "PATCH"), to profile one at a time. */
  httpCase: process.env.BENCH_HTTP_CASE || null,

  /** 3a. Lists: the runs of the large team and of the small team in one store. */
  listsLarge: num('BENCH_LISTS_LARGE', 100_000, 5_000),
  listsSmall: num('BENCH_LISTS_SMALL', 1_000, 1_000),

  /** 3b. Analytics: runs of the one factory's year. */
  analyticsRuns: num('BENCH_ANALYTICS_RUNS', 100_000, 3_000),

  /**
   * 4. Webhook ingress: signed deliveries spread over this many webhooks per accepted case (twice
   * as many for badly signed ones), enough that no webhook runs out of its per-minute budget.
   */
  webhooksPerCase: num('BENCH_WEBHOOKS', 500, 60),
  webhookSeconds: num('BENCH_WEBHOOK_SECONDS', 10, 1),

  /** 5. Memory: the server on the mixed history, then a sustained load. */
  memoryEvents: num('BENCH_MEMORY_EVENTS', 1_000_000, 10_000),
  soakSeconds: num('BENCH_SOAK_SECONDS', 300, 3),

  /** 6. Peer. */
  peerIterations: num('BENCH_PEER_ITERATIONS', 3_000, 200),
  peerConcurrency: num('BENCH_PEER_CONCURRENCY', 16, 16),

  /** The server's LOG_LEVEL under load: `info` (one line per request) is what ships. */
  logLevel: process.env.BENCH_LOG_LEVEL || 'info',
  /** Comma-separated workload ids (file names without the number and .ts) to run; all by default. */
  only: process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map((s) => s.trim()) : null,
  /** Run every benchmark process (and the servers) with --cpu-prof into bench/.cache/profiles. */
  cpuProf: process.env.BENCH_CPU_PROF === '1',
  /** The server's entry point: a bundle of src/main.ts gives CPU profiles their true line numbers. */
  serverEntry: process.env.BENCH_SERVER_ENTRY || 'src/main.ts',
  /** A workload that runs longer than this is killed and reported as failed. */
  workloadTimeoutMs: num('BENCH_WORKLOAD_TIMEOUT_S', 1200, 180) * 1000,
};
