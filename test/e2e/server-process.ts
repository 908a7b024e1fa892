/**
 * End-to-end helpers: the server and the `shopfloor` CLI as real child processes, started the
 * way the README says, on a temporary data directory. No mocks, no in-process app.
 *
 * Children are spawned detached (their own process group) so that `npm start`, the shell it
 * runs and the node server behind it are all signalled together; any child still alive when the
 * test worker exits is SIGKILLed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TEST_API_KEY = 'sf_e2e_admin_key_0123456789abcdef';

const READY_POLL_MS = 50;
const READY_TIMEOUT_MS = 20_000;

/** Settings the server reads; never inherited from the developer's shell. */
const CONFIG_VARS =
  /^(HOST|PORT|DATA_DIR|EVENTSTORE_\w+|MONGODB_URL|MONGODB_DB|PUBLIC_BASE_URL|WEBHOOK_BASE_URL|BOOTSTRAP_\w+|URL_SIGNING_SECRET|EGRESS_RANGES|LOG_LEVEL|HTTP_\w+_TIMEOUT_SECONDS|HTTP_MAX_\w+|LOAD_SHED_\w+|WEBHOOK_\w+|METRICS_\w+|OTEL_\w+|STREAM_\w+)$/;

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) signalGroup(child, 'SIGKILL');
});

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** Whether any process of the child's group still runs (zombies left to a non-reaping init do not count). */
function groupAlive(child: ChildProcess): boolean {
  if (!fs.existsSync('/proc/self/stat')) {
    try {
      process.kill(-child.pid!, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      // pid (comm) state ppid pgrp ...: comm may hold spaces, so parse after its closing paren.
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop()!.trim().split(' ');
      if (Number(fields[2]) === child.pid && fields[0] !== 'Z') return true;
    } catch {
      // exited while we looked
    }
  }
  return false;
}

export const makeDataDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-e2e-'));
export const removeDir = (dir: string | undefined): void => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
};

/** A free port on 127.0.0.1: bind port 0, read what the kernel chose, release it. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface EnvOptions {
  dataDir: string;
  /** The BOOTSTRAP_API_KEY; null starts without one (the server generates and prints a key). */
  apiKey?: string | null;
  logLevel?: string;
  extra?: Record<string, string>;
}

export function childEnv({
  dataDir,
  apiKey = TEST_API_KEY,
  logLevel = 'warn',
  extra = {},
}: EnvOptions): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !CONFIG_VARS.test(k)));
  return { ...env, DATA_DIR: dataDir, LOG_LEVEL: logLevel, ...(apiKey ? { BOOTSTRAP_API_KEY: apiKey } : {}), ...extra };
}

export interface ServerProcess {
  baseUrl: string;
  apiKey: string | null;
  dataDir: string;
  process: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `re` in stdout (bounded wait). */
  waitForOutput(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Signals the whole process group and resolves once the child has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGTERM (graceful shutdown), then SIGKILL after 5 s. */
  stop(): Promise<void>;
}

export interface StartOptions extends EnvOptions {
  /** 'node': `node --import tsx src/main.ts`; 'npm': `npm start`. */
  via?: 'node' | 'npm';
}

export async function startServer(options: StartOptions): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, await freePort());
    } catch (error) {
      // Somebody took the port between our probe and the server's bind: try another.
      if (attempt < 3 && /EADDRINUSE/.test(String(error))) continue;
      throw error;
    }
  }
}

async function startOnce(options: StartOptions, port: number): Promise<ServerProcess> {
  const env = { ...childEnv(options), HOST: '127.0.0.1', PORT: String(port) };
  const [cmd, args] =
    options.via === 'npm' ? ['npm', ['start']] : [process.execPath, ['--import', 'tsx', 'src/main.ts']];
  const child = spawn(cmd, args as string[], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => (live.delete(child), resolve())));
  const isAlive = () => child.exitCode === null && child.signalCode === null;

  const server: ServerProcess = {
    baseUrl: `http://127.0.0.1:${port}`,
    apiKey: options.apiKey === undefined ? TEST_API_KEY : options.apiKey,
    dataDir: options.dataDir,
    process: child,
    stdout: () => out,
    stderr: () => err,
    async waitForOutput(re, timeoutMs = 5_000) {
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(READY_POLL_MS)) {
        const m = out.match(re);
        if (m) return m;
      }
      throw new Error(`no ${re} in server output:\n${out}\n${err}`);
    },
    async kill(signal = 'SIGKILL') {
      if (isAlive()) signalGroup(child, signal);
      await exited;
    },
    async stop() {
      signalGroup(child, 'SIGTERM');
      // npm may exit before the server it started: wait for the whole group, not just the child.
      for (const deadline = Date.now() + 5_000; groupAlive(child) && Date.now() < deadline; )
        await sleep(READY_POLL_MS);
      signalGroup(child, 'SIGKILL');
      await exited;
    },
  };

  try {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (!isAlive())
        throw new Error(`server exited (${child.exitCode ?? child.signalCode}) before ready:\n${out}\n${err}`);
      const res = await fetch(`${server.baseUrl}/readyz`, { signal: AbortSignal.timeout(1_000) }).catch(() => null);
      if (res?.status === 200) return server;
      await res?.body?.cancel();
      if (Date.now() > deadline) throw new Error(`server not ready after ${READY_TIMEOUT_MS} ms:\n${out}\n${err}`);
      await sleep(READY_POLL_MS);
    }
  } catch (error) {
    await server.kill('SIGKILL');
    throw error;
  }
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/shopfloor.js ...args` against the data directory; SIGKILLed after `timeoutMs`. */
export function runCli(args: string[], env: EnvOptions, timeoutMs = 20_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/shopfloor.js', ...args], {
      cwd: ROOT,
      env: childEnv(env),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      resolve({ code: code ?? (signal ? 128 : null), stdout, stderr });
    });
  });
}

/** Parses `shopfloor projections status` (a console.table) into one row per read model. */
export function parseStatus(
  stdout: string,
): Array<{ projection: string; position: string; head: string; lag: string; caught_up: string }> {
  const lines = stdout.split('\n').filter((l) => l.startsWith('│'));
  const cells = (l: string) =>
    l
      .split('│')
      .slice(1, -1)
      .map((c) => c.trim().replace(/^'(.*)'$/, '$1'));
  const [header, ...rows] = lines.map(cells);
  if (!header) throw new Error(`no status table in:\n${stdout}`);
  return rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]!])) as never);
}

export interface StoredEvent {
  position: number;
  stream: string;
  revision: number;
  type: string;
  data: Record<string, unknown>;
}

/** Reads events straight from DATA_DIR/events.db, read-only, optionally one stream or a prefix. */
export function readEvents(dataDir: string, filter: { stream?: string; prefix?: string } = {}): StoredEvent[] {
  const db = new Database(path.join(dataDir, 'events.db'), { readonly: true, fileMustExist: true });
  try {
    const [where, arg] = filter.stream
      ? ['WHERE stream = ?', filter.stream]
      : filter.prefix
        ? ['WHERE stream LIKE ?', `${filter.prefix}%`]
        : ['', undefined];
    const rows = db
      .prepare(`SELECT position, stream, revision, type, data FROM events ${where} ORDER BY position`)
      .all(...(arg === undefined ? [] : [arg])) as Array<StoredEvent & { data: string }>;
    return rows.map((r) => ({ ...r, data: JSON.parse(r.data) as Record<string, unknown> }));
  } finally {
    db.close();
  }
}

/** One JSON request to the running server as `key`. */
export async function call(
  server: Pick<ServerProcess, 'baseUrl' | 'apiKey'>,
  method: string,
  url: string,
  body?: unknown,
  key = server.apiKey,
) {
  const res = await fetch(`${server.baseUrl}/api/v1${url}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    body: text ? (JSON.parse(text) as Record<string, unknown>) : null,
  };
}

/** Who owns a lease of the store in `dataDir`, read straight from its read store: the pid of its process. */
export function ownerPid(dataDir: string, name: string): number | null {
  const db = new Database(path.join(dataDir, 'read.db'), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare(`SELECT json(doc) AS doc FROM ownership WHERE id = ?`).get(name) as
      | { doc: string }
      | undefined;
    const lease = row && (JSON.parse(row.doc) as { holder: string | null; pid: number });
    return lease?.holder ? lease.pid : null;
  } finally {
    db.close();
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value, at most `ms`. */
export async function until<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  ms = 20_000,
): Promise<T> {
  for (const deadline = Date.now() + ms; ; await sleep(25)) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen in ${ms} ms`);
  }
}

/** One JSON request to `server` with options: as `key` (the admin's by default), acting for `team` when given. */
export async function request(
  server: ServerProcess,
  method: string,
  url: string,
  o: { body?: unknown; key?: string; team?: string; headers?: Record<string, string> } = {},
) {
  const res = await fetch(`${server.baseUrl}/api/v1${url}`, {
    method,
    headers: {
      authorization: `Bearer ${o.key ?? server.apiKey}`,
      ...(o.team ? { 'x-service-team-uid': o.team } : {}),
      ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...o.headers,
    },
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/**
 * Polls `check` every 100 ms until it returns a value, at most `deadlineMs`; past it, fails with
 * what the server and the worker said, which is what one needs to read then.
 */
export async function untilWithLogs<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  processes: () => { server: ServerProcess; worker: WorkerProcess | null },
  deadlineMs: number,
): Promise<T> {
  for (const deadline = Date.now() + deadlineMs; ; await sleep(100)) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) {
      const { server, worker } = processes();
      throw new Error(`${what} did not happen; worker said:\n${worker?.log() ?? ''}\nserver said:\n${server.stderr()}`);
    }
  }
}

/** The reference worker (`shopfloor worker`) in a process group of its own, its output kept for failure messages. */
export interface WorkerProcess {
  /** Everything it wrote so far, stdout and stderr interleaved. */
  log(): string;
  /** SIGTERM to its group (the agent commands it runs too); resolves once it has exited. */
  stop(): Promise<void>;
}

export function startWorker(args: string[], env: NodeJS.ProcessEnv): WorkerProcess {
  const child = spawn(process.execPath, ['bin/shopfloor.js', 'worker', ...args], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (log += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
  return {
    log: () => log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
  };
}
