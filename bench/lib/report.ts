/** bench/RESULTS.md: the machine, the date, and one table per workload. */
import { execSync } from 'node:child_process';
import os from 'node:os';
import Database from 'better-sqlite3';
import { QUICK, params } from './config.js';
import { fmt, pct } from './measure.js';
import type { Figure, WorkloadResult } from './workload.js';

export interface WorkloadOutcome {
  id: string;
  title: string;
  seconds: number;
  /** os.loadavg() just before the workload: other work on the machine skews its figures. */
  loadBefore: number[];
  maxRssMb: number | null;
  result: WorkloadResult | null;
  error: string | null;
}

const git = (cmd: string): string => {
  try {
    return execSync(`git ${cmd}`, { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return '?';
  }
};

function machine(): string[] {
  const cpus = os.cpus();
  const sqlite = new Database(':memory:').prepare('SELECT sqlite_version() AS v').get() as { v: string };
  const dirty =
    git('status --porcelain -- src commands projections queries').length > 0 ? ' (with uncommitted changes)' : '';
  return [
    `- Date: ${new Date().toISOString()}`,
    `- Machine: ${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB memory, ${os.type()} ${os.release()}`,
    `- Node ${process.version}, SQLite ${sqlite.v}; commit ${git('rev-parse --short HEAD')}${dirty}`,
  ];
}

function valueCell(f: Figure): string {
  const digits = f.value < 100 ? 1 : 0;
  return `${fmt(f.value, digits)} ${f.unit}${f.detail ? ` (${f.detail})` : ''}`;
}

function row(f: Figure): string {
  const ceiling = f.ceiling ? `${f.ceiling.name}: ${fmt(f.ceiling.value, f.ceiling.value < 100 ? 1 : 0)}` : '—';
  const ratio = f.ceiling ? pct(f.value / f.ceiling.value) : '—';
  const target = f.target ? `${f.target.text} — ${f.target.met ? '**met**' : '**missed**'}` : '—';
  return `| ${f.name} | ${valueCell(f)} | ${ceiling} | ${ratio} | ${target} |`;
}

export function renderReport(outcomes: WorkloadOutcome[], totalSeconds: number): string {
  const lines = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` (bench/run.ts)${QUICK ? ' in BENCH_QUICK mode: a smoke run, its figures mean nothing' : ''}. ` +
      'Every ceiling was measured in the same run, on the same machine, just before or after its figure; ' +
      'the ratio is figure / ceiling. These machines are shared and noisy: compare ratios rather than absolute figures.',
    '',
    ...machine(),
    `- Whole run: ${fmt(totalSeconds)} s; parameters: ${JSON.stringify({ ...params, only: params.only ?? 'all' })}`,
    '',
  ];
  const missed: string[] = [];
  for (const o of outcomes) {
    lines.push(`## ${o.title}`, '');
    lines.push(
      `_${fmt(o.seconds)} s; peak RSS of the benchmark process ${o.maxRssMb === null ? '?' : `${fmt(o.maxRssMb)} MiB`}; ` +
        `load average before: ${o.loadBefore.map((l) => l.toFixed(2)).join(', ')}._`,
      '',
    );
    if (o.error || !o.result) {
      lines.push('**Failed:**', '', '```', (o.error ?? 'no result').slice(-3000), '```', '');
      missed.push(`${o.title}: failed`);
      continue;
    }
    lines.push('| Figure | Value | Ceiling or peer (same run) | Ratio | Target |', '|---|---|---|---|---|');
    for (const f of o.result.figures) {
      lines.push(row(f));
      if (f.target && !f.target.met) missed.push(`${o.title} — ${f.name}: ${valueCell(f)}, target ${f.target.text}`);
    }
    lines.push('');
    for (const note of o.result.notes) lines.push(`- ${note}`);
    if (o.result.notes.length) lines.push('');
  }
  lines.push('## Targets missed', '');
  lines.push(...(missed.length ? missed.map((m) => `- ${m}`) : ['None.']), '');
  return lines.join('\n');
}
