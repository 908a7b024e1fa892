/**
 * 4. Memory: resident memory of the server once its read models have caught up with a large
 * mixed history, then its growth under a sustained mixed load (BENCH_SOAK_SECONDS), and the size
 * of the stores' write-ahead logs meanwhile (on disk, but they must stay bounded too).
 */
import fs from 'node:fs';
import path from 'node:path';
import { params } from '../lib/config.js';
import { fmt, log, perSecond } from '../lib/measure.js';
import { rssMb, sampleRss } from '../lib/proc.js';
import { cachedReactedHistory } from '../lib/reacted-history.js';
import { copyHistory } from '../lib/seed.js';
import { authHeaders, load, type LoadCase, startServer } from '../lib/server.js';
import { tempDir } from '../lib/tmp.js';
import type { Figure, Workload } from '../lib/workload.js';

/** Least-squares slope of samples taken every `everyMs`, in MiB per minute. */
function slopePerMinute(samples: number[], everyMs: number): number {
  const n = samples.length;
  if (n < 2) return 0;
  const xs = samples.map((_, i) => (i * everyMs) / 60_000);
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = samples.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (samples[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den ? num / den : 0;
}

const SAMPLE_MS = 1000;
/** The issue's bound on the server's resident memory once its read models and reactors have caught up. */
const LOADED_RSS_TARGET_MB = 300;
const WAL_FILES = ['events.db-wal', 'read.db-wal'];

const fileMb = (file: string): number => {
  try {
    return fs.statSync(file).size / 1024 / 1024;
  } catch {
    return 0;
  }
};

/** The largest size each of the data dir's write-ahead logs reached, sampled every `everyMs`. */
function sampleWalSizes(dir: string, everyMs: number): { stop(): Map<string, number> } {
  const largest = new Map(WAL_FILES.map((f) => [f, 0]));
  const sample = () => {
    for (const f of WAL_FILES) largest.set(f, Math.max(largest.get(f)!, fileMb(path.join(dir, f))));
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return largest;
    },
  };
}

const workload: Workload = {
  title: '5. Memory',
  async run() {
    // As a server leaves its log (its reactors' effects recorded), so the reactors' first pass over
    // an old log, which workload 5b measures, is not what this one waits for.
    const { file, events } = await cachedReactedHistory('mixed', params.memoryEvents);
    const dir = tempDir('memory');
    copyHistory(file, dir);
    log(`starting the server on ${fmt(events)} events; the projector builds every read model first`);
    const server = await startServer(dir, 'server-memory');
    const { proc, base } = server;
    try {
      log(`ready after ${fmt(server.readyMs)} ms; the reactors passed the log ${fmt(server.reactorsMs)} ms later`);
      await new Promise((r) => setTimeout(r, 2000));
      const loaded = rssMb(proc.pid);

      // Factories of our own for the load to read and change.
      const uids: string[] = [];
      for (let i = 0; i < 200; i++) {
        const res = await fetch(`${base}/api/v1/factory`, {
          method: 'POST',
          headers: authHeaders,
          body: JSON.stringify({ name: `Soak ${i}` }),
        });
        if (res.status !== 201) throw new Error(`POST /factory: ${res.status} ${await res.text()}`);
        uids.push(((await res.json()) as { uid: string }).uid);
      }
      const pick = () => uids[Math.floor(Math.random() * uids.length)]!;
      /** Each connection sends these four in turn: list, get, change, create. */
      const mixed: LoadCase[] = [
        { method: 'GET', path: '/api/v1/factory?limit=50', headers: authHeaders },
        {
          method: 'GET',
          path: `/api/v1/factory/${pick()}`,
          headers: authHeaders,
          vary: () => ({ path: `/api/v1/factory/${pick()}` }),
        },
        {
          method: 'PATCH',
          path: `/api/v1/factory/${pick()}`,
          headers: authHeaders,
          vary: () => ({
            path: `/api/v1/factory/${pick()}`,
            body: JSON.stringify({ description: `soak ${Math.random()}` }),
          }),
        },
        {
          method: 'POST',
          path: '/api/v1/factory',
          headers: authHeaders,
          vary: () => ({ body: JSON.stringify({ name: `Soak factory ${Math.random()}` }) }),
        },
      ];

      log(`sustained mixed load for ${params.soakSeconds} s`);
      const sampler = sampleRss(proc.pid, SAMPLE_MS);
      const walSampler = sampleWalSizes(dir, SAMPLE_MS);
      const r = await load(base, mixed, params.soakSeconds);
      const samples = sampler.stop();
      const walLargest = walSampler.stop();
      await new Promise((res) => setTimeout(res, 3000));
      const idle = rssMb(proc.pid);

      const start = samples[0]!;
      const end = samples.at(-1)!;
      const peak = Math.max(...samples);
      // The first half warms up (JIT, V8 heap sizing, SQLite page cache); a leak keeps growing after it.
      const middle = samples[Math.floor(samples.length / 2)]!;
      const slope = slopePerMinute(samples.slice(Math.floor(samples.length / 2)), SAMPLE_MS);
      const growth = end - start;
      const lateGrowth = end - middle;
      const flat = lateGrowth <= Math.max(0.05 * middle, 8);
      const figures: Figure[] = [
        {
          name: `Server catch-up on start: every read model from ${fmt(events)} events`,
          value: perSecond(events, server.readyMs),
          unit: 'events/s',
          detail: `${fmt(server.readyMs / 1000, 1)} s from spawn to /readyz 200`,
        },
        {
          name: `RSS after loading ${fmt(events)} events (read models caught up)`,
          value: loaded,
          unit: 'MiB',
          target: { text: `< ${LOADED_RSS_TARGET_MB} MiB`, met: loaded < LOADED_RSS_TARGET_MB },
        },
        {
          name: `RSS during ${params.soakSeconds} s of mixed load: start → end (peak)`,
          value: end,
          unit: 'MiB',
          detail:
            `start ${fmt(start)} MiB, end ${fmt(end)} MiB, peak ${fmt(peak)} MiB, 3 s after the load ${fmt(idle)} MiB; ` +
            `${fmt(r.rps)} req/s, ${fmt(r.requests)} requests, p99 ${r.p99} ms${r.failures ? `, **${fmt(r.failures)} failed: ${r.failureDetail}**` : ''}`,
          target: { text: 'flat: growth over the second half ≤ max(5%, 8 MiB)', met: flat },
        },
        {
          name: 'RSS growth over the load: whole, second half',
          value: growth,
          unit: 'MiB',
          detail: `second half ${lateGrowth.toFixed(1)} MiB, least-squares slope over it ${slope.toFixed(1)} MiB/min`,
        },
        {
          name: 'Write-ahead logs during the load: the largest size reached',
          value: Math.max(...walLargest.values()),
          unit: 'MiB',
          detail: WAL_FILES.map(
            (f) => `${f} ${fmt(walLargest.get(f)!, 1)} MiB (${fmt(fileMb(path.join(dir, f)), 1)} MiB after the load)`,
          ).join(', '),
        },
      ];
      return {
        figures,
        notes: [
          `The server (\`node --import tsx src/main.ts\`, LOG_LEVEL=${params.logLevel}) starts on a copy of the \`mixed\` history of workload 2 as a server leaves it (its reactors' effects in the log: lib/reacted-history.ts, shared with workload 5b) with an empty read store, ` +
            `so /readyz waits for the live projector to build every read model. RSS is read from /proc every ${SAMPLE_MS / 1000} s, ` +
            `and the sizes of the two write-ahead logs from the data dir as often (a checkpoint thread copies each back into its database and starts it over once long).`,
          `Load: autocannon, ${params.httpConnections} connections, requests cycling GET /factory?limit=50, GET /factory/{uid}, PATCH /factory/{uid}, POST /factory ` +
            `(the log and the read models grow during the load) for ${params.soakSeconds} s (BENCH_SOAK_SECONDS; the issue asks for 5 minutes).`,
        ],
      };
    } finally {
      await proc.stop();
    }
  },
};
export default workload;
