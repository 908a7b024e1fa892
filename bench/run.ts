/**
 * `npm run bench`: runs every workload of bench/workloads/ (in file-name order) in its own
 * process and writes bench/RESULTS.md. A new workload is one more file there. See bench/README.md.
 */
import { execFileSync, fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BENCH_DIR, CACHE_DIR, params, QUICK, ROOT_DIR } from './lib/config.js';
import { fmt, log } from './lib/measure.js';
import { nodeFlags } from './lib/proc.js';
import { renderReport, type WorkloadOutcome } from './lib/report.js';
import type { ChildReport, HistoryMaking } from './lib/workload.js';

const WORKLOADS = path.join(BENCH_DIR, 'workloads');
/** `30-http.ts` → `http` */
const idOf = (file: string) => file.replace(/^\d+-/, '').replace(/\.ts$/, '');

async function runWorkload(file: string): Promise<WorkloadOutcome> {
  const id = idOf(file);
  const started = performance.now();
  const loadBefore = os.loadavg();
  log(`── ${id}`);
  const child = fork(path.join(BENCH_DIR, 'lib', 'child.ts'), [path.join(WORKLOADS, file)], {
    cwd: ROOT_DIR,
    execArgv: nodeFlags(`workload-${id}`),
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    stderr = (stderr + chunk.toString()).slice(-6000);
  });
  let report: ChildReport | null = null;
  // SIGTERM first: the workload process then kills the servers it started (bench/lib/proc.ts).
  const stop = () => {
    log(`${id}: still running after ${params.workloadTimeoutMs / 1000} s, stopping it`);
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  };
  let timer = setTimeout(stop, params.workloadTimeoutMs);
  // Making a cached history is not the workload: its time is not counted against the bound.
  child.on('message', (m: ChildReport | HistoryMaking) => {
    if (!('making' in m)) report = m;
    else if (m.making) clearTimeout(timer);
    else timer = setTimeout(stop, params.workloadTimeoutMs);
  });
  const code = await new Promise<number | string>((resolve) => child.once('exit', (c, s) => resolve(c ?? s ?? '?')));
  clearTimeout(timer);
  const seconds = (performance.now() - started) / 1000;
  const done = report as ChildReport | null;
  log(`── ${id} done in ${fmt(seconds)} s (exit ${code})`);
  return {
    id,
    title: done?.title ?? id,
    seconds,
    loadBefore,
    maxRssMb: done?.maxRssMb ?? null,
    result: done?.result ?? null,
    error: done ? null : `exit ${code}\n${stderr}`,
  };
}

const started = performance.now();
const files = fs
  .readdirSync(WORKLOADS)
  .filter((f) => /^\d+-.+\.ts$/.test(f))
  .sort()
  .filter((f) => !params.only || params.only.includes(idOf(f)));
if (files.length === 0) throw new Error(`no workload matches BENCH_ONLY=${params.only?.join(',')}`);

const outcomes: WorkloadOutcome[] = [];
for (const file of files) outcomes.push(await runWorkload(file));

const report = path.join(BENCH_DIR, 'RESULTS.md');
const out = process.env.BENCH_OUT ?? (QUICK || params.only ? path.join(CACHE_DIR, 'RESULTS.partial.md') : report);
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, renderReport(outcomes, (performance.now() - started) / 1000));
// The committed report is formatted as `npm run check` wants it (biome aligns tables), so it can be committed as written.
if (path.resolve(out) === report)
  execFileSync(path.join(ROOT_DIR, 'node_modules', '.bin', 'biome'), ['format', '--write', out], { stdio: 'ignore' });
log(`wrote ${path.relative(process.cwd(), out)}`);
if (outcomes.some((o) => o.error)) process.exitCode = 1;
