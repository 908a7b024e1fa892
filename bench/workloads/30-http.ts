/**
 * 3. HTTP commands and queries against the real server process over `httpFactories` factories of
 * one team, each against a bare Fastify hello-world process measured in the same run.
 */
import Database from 'better-sqlite3';
import { params } from '../lib/config.js';
import { CITIES } from '../lib/history.js';
import { fmt, log } from '../lib/measure.js';
import { rssMb } from '../lib/proc.js';
import { cachedHistory, copyHistory } from '../lib/seed.js';
import { authHeaders, load, type LoadCase, type LoadResult, paced, startBare, startServer } from '../lib/server.js';
import { tempDir } from '../lib/tmp.js';
import type { Figure, Workload } from '../lib/workload.js';

interface Case extends LoadCase {
  name: string;
  kind: 'command' | 'query';
}

const TARGETS = {
  command: { share: 0.15, p99: 10 },
  query: { share: 0.4, p99: 5 },
};

const workload: Workload = {
  title: '3. HTTP commands and queries',
  async run() {
    const { file, info } = await cachedHistory('one-team', params.httpFactories);
    const db = new Database(file, { readonly: true });
    const uids = db.prepare(`SELECT json_extract(data, '$.uid') AS uid FROM events WHERE type = 'FactoryCreated'`).pluck().all() as string[];
    db.close();
    const pick = () => uids[Math.floor(Math.random() * uids.length)]!;

    const dir = tempDir('http');
    copyHistory(file, dir);
    log(`starting the server on ${fmt(info.events)} events (${fmt(uids.length)} factories); the projector catches up first`);
    const server = await startServer(dir, 'server-http');
    log(`ready after ${fmt(server.readyMs)} ms`);
    const bare = await startBare();

    const city = CITIES[7]!;
    /** Names sort by city first: a search walks the names of the cities before it first. */
    const before = CITIES.filter((c) => c < city).length / CITIES.length;
    const cases: Case[] = [
      { name: 'GET /factory?limit=50 (first page)', kind: 'query', method: 'GET', path: '/api/v1/factory?limit=50', headers: authHeaders },
      { name: 'GET /factory/{uid} (random)', kind: 'query', method: 'GET', path: `/api/v1/factory/${pick()}`, headers: authHeaders, vary: () => ({ path: `/api/v1/factory/${pick()}` }) },
      {
        name: 'PATCH /factory/{uid} (random, new description)',
        kind: 'command',
        method: 'PATCH',
        path: `/api/v1/factory/${pick()}`,
        headers: authHeaders,
        vary: () => ({ path: `/api/v1/factory/${pick()}`, body: JSON.stringify({ description: `changed ${Math.random()}` }) }),
      },
      {
        name: 'POST /factory (create)',
        kind: 'command',
        method: 'POST',
        path: '/api/v1/factory',
        headers: authHeaders,
        body: JSON.stringify({ name: 'Bench factory', alias: 'BENCH', repositories: [{ owner: 'acme', repo: 'bench' }] }),
      },
      {
        name: `GET /factory?limit=50&search=${city} (matches ${Math.round(100 / CITIES.length)}%, after ${Math.round(before * 100)}% of the names)`,
        kind: 'query',
        method: 'GET',
        path: `/api/v1/factory?limit=50&search=${city}`,
        headers: authHeaders,
      },
    ];

    const hello: LoadCase = { method: 'GET', path: '/' };
    const results: Array<{ c: Case; r: LoadResult; open: LoadResult }> = [];
    let bareBefore: LoadResult;
    let bareAfter: LoadResult;
    let bareOpen: LoadResult;
    let serverRss: number;
    try {
      bareBefore = await load(bare.base, hello);
      for (const c of cases.filter((c) => !params.httpCase || c.name.includes(params.httpCase))) {
        const from = server.uptime();
        const r = await load(server.base, c);
        log(`(server profile window for this case: --window ${from.toFixed(0)}-${server.uptime().toFixed(0)})`);
        // Latency without queueing: the same case paced at a quarter of the throughput just measured.
        const steady = await paced(server.base, c, Math.max(1, Math.round(r.rps / 4)), Math.min(5, params.httpSeconds));
        results.push({ c, r, open: steady });
      }
      bareAfter = await load(bare.base, hello);
      // The control of the open-loop figures: what the client and the machine add to any request.
      bareOpen = await paced(bare.base, hello, 1000, Math.min(5, params.httpSeconds));
      serverRss = rssMb(server.proc.pid);
    } finally {
      await server.proc.stop();
      await bare.proc.stop();
    }
    const bareRps = (bareBefore.rps + bareAfter.rps) / 2;
    const ceiling = { name: 'bare Fastify hello world', value: bareRps };
    const lat = (r: LoadResult) =>
      (r.requests > 0 ? `p50 ${r.p50} ms, p99 ${r.p99} ms` : 'no request answered within the 10 s timeout') +
      (r.failures ? `, **${fmt(r.failures)} failed: ${r.failureDetail}**` : '');

    const figures: Figure[] = [
      { name: 'Bare Fastify hello world (before the cases)', value: bareBefore.rps, unit: 'req/s', detail: lat(bareBefore) },
      { name: 'Bare Fastify hello world (after the cases)', value: bareAfter.rps, unit: 'req/s', detail: lat(bareAfter) },
      { name: 'Bare Fastify hello world, open loop (control for the open-loop latencies)', value: bareOpen.rps, unit: 'req/s', detail: lat(bareOpen) },
      ...results.map(({ c, r, open }): Figure => {
        const t = TARGETS[c.kind];
        return {
          name: `${c.kind === 'command' ? 'Command' : 'Query'}: ${c.name}`,
          value: r.rps,
          unit: 'req/s',
          detail: `${lat(r)}; open loop at ${fmt(open.rps)} req/s: ${lat(open)}`,
          ceiling,
          target: {
            text: `≥ ${t.share * 100}% of bare, p99 < ${t.p99} ms`,
            met: r.rps / bareRps >= t.share && r.p99 < t.p99 && r.failures === 0,
          },
        };
      }),
    ];
    return {
      figures,
      notes: [
        `Server: \`node --import tsx src/main.ts\` on a copy of a generated log of ${fmt(info.events)} events ` +
          `(${fmt(uids.length)} factories of the admin's team, a fifth updated once; bench/lib/history.ts \`one-team\`), ` +
          `LOG_LEVEL=${params.logLevel}; ready (read models caught up) ${fmt(server.readyMs / 1000, 1)} s after spawn. RSS after the cases: ${fmt(serverRss)} MiB.`,
        `Load: autocannon in the benchmark process, ${params.httpConnections} connections, ${params.httpSeconds} s per case after a short warm-up, ` +
          `127.0.0.1 only; load generator and server share the machine's cores, as in the bare runs. Latencies have autocannon's 1 ms resolution.`,
        `The ceiling is the mean of the two bare runs. Cases run in the order shown; the search comes last because its queued requests ` +
          `outlive a case (the harness also waits, at most 60 s, for the server to answer /healthz promptly before and after each case). ` +
          `The factories created by the POST case do not match the search word. A search that matches nothing scans every factory of the team.`,
        `With ${params.httpConnections} connections each waiting for its answer, latency is connections / throughput (Little's law): ` +
          `p99 < 10 ms needs more than ${fmt(params.httpConnections / 0.01)} req/s and p99 < 5 ms more than ${fmt(params.httpConnections / 0.005)} req/s. ` +
          `So each case is run again open loop: requests sent evenly at a quarter of its throughput for 5 s, from one keep-alive fetch client, ` +
          `each timed from its scheduled start (0.1 ms resolution): the latency of a request that does not queue behind 49 others. ` +
          `Targets are judged on the full-speed run.`,
      ],
    };
  },
};
export default workload;
