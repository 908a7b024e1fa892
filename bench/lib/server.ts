/** The real server and the bare Fastify ceiling as processes on 127.0.0.1, and autocannon against them. */
import { fork } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { reactorCheckpoint } from '../../src/projector/reactor.js';
import { features } from '../../src/features.js';
import { BENCH_DIR, params } from './config.js';
import { BENCH_ADMIN_KEY } from './history.js';
import { log, now, statusExpected } from './measure.js';
import { freePort, type NodeProcess, nodeFlags, startNode, waitFor200 } from './proc.js';
import type { PacedJob, PacedReport, PacedRequest } from './paced-client.js';

export interface Server {
  proc: NodeProcess;
  base: string;
  /** Milliseconds from spawn until /readyz answered 200 (read models caught up). */
  readyMs: number;
  /** Milliseconds after that until every reactor had passed the head of the log (0 for other servers). */
  reactorsMs: number;
  /** Seconds since spawn: where to look in the server's CPU profile (bench/profile.ts --window). */
  uptime(): number;
}

/**
 * `node --import tsx src/main.ts` (or BENCH_SERVER_ENTRY) on `dataDir`; resolves once /readyz says
 * ready and every reactor has passed the head of the log: on a fresh read store they replay it once,
 * and a case measured meanwhile would share the cores with that replay.
 */
export async function startServer(
  dataDir: string,
  name: string,
  readyTimeoutMs = 600_000,
  env: Record<string, string> = {},
  /** Started once the server is spawned, stopped once its reactors have passed the head. */
  whileCatchingUp?: (base: string) => { stop(): Promise<void> },
): Promise<Server> {
  const port = await freePort();
  const start = now();
  const proc = startNode(
    params.serverEntry,
    {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      BOOTSTRAP_API_KEY: BENCH_ADMIN_KEY,
      LOG_LEVEL: params.logLevel,
      ...env,
    },
    name,
  );
  const base = `http://127.0.0.1:${port}`;
  const watching = whileCatchingUp?.(base);
  let readyMs: number;
  try {
    await waitFor200(`${base}/readyz`, proc, readyTimeoutMs);
    readyMs = now() - start;
    await reactorsPassedHead(dataDir, readyTimeoutMs);
  } finally {
    await watching?.stop();
  }
  return { proc, base, readyMs, reactorsMs: now() - start - readyMs, uptime: () => (now() - start) / 1000 };
}

const REACTOR_CHECKPOINTS = features.flatMap((f) => f.reactors ?? []).map(reactorCheckpoint);

/** Polls the stores' files until every reactor's checkpoint is at the head of the log (which their own appends move). */
async function reactorsPassedHead(dataDir: string, timeoutMs: number): Promise<void> {
  const start = now();
  const events = new Database(path.join(dataDir, 'events.db'), { readonly: true });
  const read = new Database(path.join(dataDir, 'read.db'), { readonly: true });
  const head = events.prepare('SELECT max(position) FROM events').pluck();
  const names = JSON.stringify(REACTOR_CHECKPOINTS);
  const behind = read
    .prepare(
      `SELECT count(*) FROM json_each(?) AS r LEFT JOIN checkpoints c ON c.name = r.value
       WHERE c.name IS NULL OR CAST(c.commit_pos AS INTEGER) < ?`,
    )
    .pluck();
  try {
    while ((behind.get(names, head.get()) as number) > 0) {
      if (now() - start > timeoutMs) throw new Error(`the reactors did not pass the log's head in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    events.close();
    read.close();
  }
}

export async function startBare(): Promise<Server> {
  const port = await freePort();
  const start = now();
  const proc = startNode('bench/lib/bare-server.ts', { PORT: String(port) }, 'bare');
  const base = `http://127.0.0.1:${port}`;
  await waitFor200(`${base}/readyz`, proc, 60_000);
  return { proc, base, readyMs: now() - start, reactorsMs: 0, uptime: () => (now() - start) / 1000 };
}

/** The CRUD peer (bench/lib/crud-peer.ts) on the SQLite file `dbFile`, seeded beforehand. */
export async function startCrudPeer(dbFile: string): Promise<Server> {
  const port = await freePort();
  const start = now();
  const proc = startNode('bench/lib/crud-peer.ts', { PORT: String(port), DB_FILE: dbFile }, 'crud-peer');
  const base = `http://127.0.0.1:${port}`;
  await waitFor200(`${base}/readyz`, proc, 60_000);
  return { proc, base, readyMs: now() - start, reactorsMs: 0, uptime: () => (now() - start) / 1000 };
}

export const authHeaders = { authorization: `Bearer ${BENCH_ADMIN_KEY}`, 'content-type': 'application/json' };

export interface LoadCase {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  body?: string;
  headers?: Record<string, string>;
  /**
   * Called for every request: vary the path, body or headers (headers replace the case's).
   * `context` is the connection's, fresh whenever its sequence starts over (for a single case, at
   * every request); onResponse gets it back with the answer.
   */
  vary?: (context: RequestContext) => { path?: string; body?: string; headers?: Record<string, string> };
  /** Called with every answer (not for requests cut off when a run ends). */
  onResponse?: (status: number, context: RequestContext) => void;
  /** The status every answer should have; others count as failures. Default: any 2xx. */
  expect?: number;
}

type RequestContext = Record<string, unknown>;

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  max: number;
  requests: number;
  /** Answers that were not 2xx, plus errors and timeouts. */
  failures: number;
  /** e.g. "503×12, errors×3" when anything failed. */
  failureDetail: string;
}

/** The requests of one case: every connection sends them in turn, over and over. */
const sequence = (c: LoadCase | LoadCase[]): LoadCase[] => (Array.isArray(c) ? c : [c]);

const expected = (r: LoadCase, status: number) => statusExpected(status, r.expect);

function once(
  base: string,
  c: LoadCase | LoadCase[],
  seconds: number,
  connections: number,
): Promise<autocannon.Result> {
  return autocannon({
    url: base,
    connections,
    duration: seconds,
    requests: sequence(c).map((r) => ({
      method: r.method,
      path: r.path,
      headers: r.headers ?? {},
      ...(r.body !== undefined ? { body: r.body } : {}),
      ...(r.vary
        ? {
            setupRequest: (req: autocannon.Request, context: object) => ({
              ...req,
              ...r.vary!(context as RequestContext),
            }),
          }
        : {}),
      ...(r.onResponse
        ? {
            onResponse: (status: number, _body: string, context: object) =>
              r.onResponse!(status, context as RequestContext),
          }
        : {}),
    })),
  });
}

/**
 * Waits until the server answers /healthz quickly again: requests queued by a slow case keep it
 * busy after the load stops, and would otherwise be billed to the next case.
 */
async function drain(base: string, maxMs = 60_000): Promise<number> {
  const start = now();
  while (now() - start < maxMs) {
    const t = now();
    try {
      await (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5000) })).arrayBuffer();
      if (now() - t < 50) break;
    } catch {
      // still busy
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return now() - start;
}

/** A short warm-up (JIT, caches), then `seconds` of load from `connections` connections. */
export async function load(
  base: string,
  c: LoadCase | LoadCase[],
  seconds = params.httpSeconds,
  connections = params.httpConnections,
): Promise<LoadResult> {
  await warmUp(base, c, seconds, connections);
  return measure(base, c, seconds, connections);
}

/**
 * One request of each kind (failing fast on a wrong route, key or body rather than measuring
 * errors), then a fifth of `seconds` (0.5 to 1 s) of load; returns once the server is quiet.
 */
export async function warmUp(
  base: string,
  c: LoadCase | LoadCase[],
  seconds = params.httpSeconds,
  connections = params.httpConnections,
): Promise<void> {
  for (const r of sequence(c)) {
    const context: RequestContext = {};
    const probe = r.vary?.(context) ?? {};
    const body = probe.body ?? r.body;
    const res = await fetch(base + (probe.path ?? r.path), {
      method: r.method,
      headers: probe.headers ?? r.headers ?? {},
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    r.onResponse?.(res.status, context);
    if (!expected(r, res.status)) throw new Error(`${r.method} ${r.path}: ${res.status} ${text.slice(0, 500)}`);
  }
  await once(base, c, Math.max(0.5, Math.min(1, seconds / 5)), connections);
  await drain(base);
}

/** `seconds` of load from `connections` connections, and the wait for the server to be quiet again. */
export async function measure(
  base: string,
  c: LoadCase | LoadCase[],
  seconds = params.httpSeconds,
  connections = params.httpConnections,
): Promise<LoadResult> {
  const r = await once(base, c, seconds, connections);
  const drained = await drain(base);
  if (drained > 1000) log(`the server needed ${Math.round(drained)} ms to finish the requests queued by this case`);
  const unexpected = Object.entries(r.statusCodeStats ?? {}).filter(
    ([code]) => !sequence(c).some((q) => expected(q, Number(code))),
  );
  const result: LoadResult = {
    rps: r.requests.total / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    requests: r.requests.total,
    failures: unexpected.reduce((n, [, s]) => n + (s.count ?? 0), 0) + r.errors + r.timeouts,
    failureDetail: [
      ...unexpected.map(([code, s]) => `${code}×${s.count ?? 0}`),
      ...(r.errors ? [`errors×${r.errors}`] : []),
      ...(r.timeouts ? [`timeouts×${r.timeouts}`] : []),
    ].join(', '),
  };
  log(
    `${sequence(c)
      .map((r) => `${r.method} ${r.path}`)
      .join(', ')}: ${Math.round(result.rps)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms` +
      (result.failures ? `, ${result.failures} failed (${result.failureDetail})` : ''),
  );
  return result;
}

const PACED_WARM_UP_SECONDS = 1;

/**
 * Open-loop latency: requests sent at a steady `rate` (evenly spaced, whether or not earlier ones
 * have been answered) for `seconds`, each timed from its scheduled start. Unlike a closed loop of
 * connections, this shows what one request costs when it does not queue behind the others.
 * The requests are made here and sent by a lean process of its own (`paced-client.ts`). Its first
 * second warms it up and is not timed: its keep-alive pool opens a connection per request in
 * flight, and while it grows, requests wait up to 280 ms (task by id at 1,000 req/s for 6 s: p99
 * 66-80 ms in all, 7-12 ms after the first second). Answers are not seen here: no `onResponse`.
 */
export async function paced(base: string, c: LoadCase, rate: number, seconds: number): Promise<LoadResult> {
  if (c.onResponse) throw new Error('paced() sends from another process and cannot call onResponse');
  const untimed = Math.floor(rate * PACED_WARM_UP_SECONDS);
  const total = Math.max(1, Math.floor(rate * seconds));
  const requests = Array.from({ length: untimed + total }, (): PacedRequest => {
    const v = c.vary?.({}) ?? {};
    return {
      method: c.method,
      url: base + (v.path ?? c.path),
      headers: v.headers ?? c.headers ?? {},
      body: v.body ?? c.body,
    };
  });
  const client = fork(path.join(BENCH_DIR, 'lib', 'paced-client.ts'), { execArgv: nodeFlags('paced-client') });
  const answered = new Promise<PacedReport>((resolve, reject) => {
    client.once('message', (report) => resolve(report as PacedReport));
    client.once('exit', (code) => reject(new Error(`the paced client exited with ${code} before it reported`)));
  });
  client.send({ requests, interval: 1000 / rate, untimed, expect: c.expect } satisfies PacedJob);
  const { latencies, failures, ms } = await answered;
  const sorted = latencies.sort((a, b) => a - b);
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? NaN;
  const result: LoadResult = {
    rps: (total * 1000) / ms,
    p50: Math.round(q(0.5) * 10) / 10,
    p99: Math.round(q(0.99) * 10) / 10,
    max: Math.round((sorted.at(-1) ?? NaN) * 10) / 10,
    requests: latencies.length,
    failures,
    failureDetail: failures ? `${failures} not 2xx or failed` : '',
  };
  log(
    `${c.method} ${c.path} paced at ${rate} req/s: p50 ${result.p50} ms, p99 ${result.p99} ms${failures ? `, ${failures} failed` : ''}`,
  );
  await drain(base);
  return result;
}
