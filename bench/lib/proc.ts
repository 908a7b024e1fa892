/**
 * Child processes: the real server (`node --import tsx src/main.ts`), the bare Fastify server,
 * and the resident memory of a process as Linux reports it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { CACHE_DIR, params, ROOT_DIR } from './config.js';

/** Processes this process started and has not stopped: killed when it exits, however it exits. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});
process.once('SIGTERM', () => process.exit(143));

/**
 * Node flags for every benchmark process: TypeScript through tsx, and with BENCH_CPU_PROF=1 a CPU
 * profile in bench/.cache/profiles/<role>/ (Node names it CPU.<date>.<time>.<pid>.<thread>.<n>;
 * thread 0 is the main thread, the others are tsx's loader).
 */
export function nodeFlags(role: string): string[] {
  const flags = ['--import', 'tsx'];
  if (params.cpuProf) {
    const dir = path.join(CACHE_DIR, 'profiles', role);
    fs.mkdirSync(dir, { recursive: true });
    flags.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
  }
  return flags;
}

/** A port the OS has just handed out on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface NodeProcess {
  child: ChildProcess;
  pid: number;
  /** The last lines of stderr (and of stdout when it is not discarded), for error messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts `script` (a path relative to the repository) under Node with tsx. */
export function startNode(script: string, env: Record<string, string>, role: string, keepStdout = false): NodeProcess {
  const child = spawn(process.execPath, [...nodeFlags(role), script], {
    cwd: ROOT_DIR,
    env: { ...process.env, ...env },
    stdio: ['ignore', keepStdout ? 'pipe' : 'ignore', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4000);
  };
  child.stderr!.on('data', keep);
  child.stdout?.on('data', keep);
  live.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      live.delete(child);
      resolve();
    }),
  );
  return {
    child,
    pid: child.pid!,
    output: () => tail,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Polls `url` until it answers 200; fails early when the process dies. */
export async function waitFor200(url: string, proc: NodeProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) {
      throw new Error(
        `process exited (${proc.child.exitCode ?? proc.child.signalCode}) before ${url} answered:\n${proc.output()}`,
      );
    }
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready after ${timeoutMs} ms:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Resident memory of a process in MiB, from /proc (Linux). */
export function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS for ${pid}`);
  return Number(match[1]) / 1024;
}

/** Samples the RSS of `pid` every `everyMs` until stopped; returns every sample. */
export function sampleRss(pid: number, everyMs = 1000): { stop(): number[] } {
  const samples: number[] = [rssMb(pid)];
  const timer = setInterval(() => {
    try {
      samples.push(rssMb(pid));
    } catch {
      // the process is gone; keep what we have
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return samples;
    },
  };
}
