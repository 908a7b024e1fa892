/**
 * 3. HTTP commands and queries on tasks and runs against the real server process, over a history
 * of `httpTasks` tasks and `httpRuns` runs of one team, each against a bare Fastify hello-world
 * process measured in the same run. Each query is also set beside bare Fastify sending that
 * query's own answers: the share of hello world that serializing and sending them leaves.
 */
import Database from 'better-sqlite3';
import { STAGES, type Stage } from '../../commands/task/events.js';
import type { PageInfo } from '../../src/http/cursor.js';
import { params } from '../lib/config.js';
import { fmt, log, pct } from '../lib/measure.js';
import { rssMb } from '../lib/proc.js';
import { cachedReactedHistory } from '../lib/reacted-history.js';
import { copyHistory } from '../lib/seed.js';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { seedCrudPeer } from '../lib/crud-peer.js';
import { BENCH_ADMIN_KEY } from '../lib/history.js';
import {
  authHeaders,
  load,
  type LoadCase,
  type LoadResult,
  paced,
  startBare,
  startCrudPeer,
  startServer,
} from '../lib/server.js';
import { tempDir } from '../lib/tmp.js';
import type { Figure, Workload } from '../lib/workload.js';

interface Case extends LoadCase {
  name: string;
  kind: 'command' | 'query';
  /** Not one of the cases: a yardstick for them, with no target of its own. */
  reference?: true;
}

/**
 * Issue #25's targets: a query at least half of bare Fastify sending its own answers, a command
 * at least half of the CRUD peer doing the same write (bench/lib/crud-peer.ts).
 */
const TARGET_SHARE = 0.5;

/** The stage the task lists filter on, and how many pages after the first the paging case reads. */
const LIST_STAGE: Stage = 'IMPLEMENT';
const LIST_PAGES = 20;
const RUN_STATE = 'FAILED';
/** How many of a query case's answers the bare answer route holds. */
const ANSWERS = 20;
/**
 * The most the open-loop client is asked to send a second, the control row's rate: past about
 * 2,000 a second one fetch client falls behind its schedule and times its own lag (p50 285 ms
 * at 2,800 a second on a factory by id).
 */
const PACED_MAX_RPS = 1000;

/** Shares of each value, largest first: "SUCCEEDED 62%, FAILED 12%, ...". */
const shares = (values: Iterable<string>): string => {
  const counts = new Map<string, number>();
  let total = 0;
  for (const v of values) {
    counts.set(v, (counts.get(v) ?? 0) + 1);
    total += 1;
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([v, n]) => `${v} ${pct(n / total)}`)
    .join(', ');
};

/** The answer to `init` at `base` + `path`; any status but 2xx stops the benchmark. */
async function answerOf(base: string, path: string, init: RequestInit = { headers: authHeaders }): Promise<unknown> {
  const res = await fetch(`${base}${path}`, init);
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** `ANSWERS` of the case's own answers, as a client gets them. */
async function sampleAnswers(base: string, c: Case): Promise<unknown[]> {
  const answers: unknown[] = [];
  for (let i = 0; i < ANSWERS; i++) answers.push(await answerOf(base, c.vary?.({}).path ?? c.path));
  return answers;
}

/** Bare Fastify answering with `answers`; their mean size in bytes beside its figures. */
async function bareAnswering(base: string, answers: unknown[]): Promise<{ r: LoadResult; bytes: number }> {
  await answerOf(base, '/answers', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(answers),
  });
  const bytes = answers.reduce((sum: number, a) => sum + Buffer.byteLength(JSON.stringify(a)), 0) / answers.length;
  return { r: await load(base, { method: 'GET', path: '/answer' }), bytes };
}

const workload: Workload = {
  title: '3. HTTP commands and queries',
  async run() {
    const { file, info } = await cachedReactedHistory('tasks-runs', params.httpRuns, params.httpTasks);
    const db = new Database(file, { readonly: true });
    const factories = db
      .prepare(`SELECT json_extract(data, '$.uid') FROM events WHERE type = 'FactoryCreated' ORDER BY position`)
      .pluck()
      .all() as string[];
    const tasks = new Map<string, { factory: string; stage: Stage }>();
    const taskEvents = db.prepare(
      `SELECT type, data FROM events WHERE type IN ('TaskCreated', 'TaskStageChanged', 'TaskCancelled') ORDER BY position`,
    );
    for (const { type, data } of taskEvents.iterate() as Iterable<{ type: string; data: string }>) {
      const d = JSON.parse(data) as { uid: string; factory_uid: string; stage: Stage; to: Stage };
      if (type === 'TaskCreated') tasks.set(d.uid, { factory: d.factory_uid, stage: d.stage });
      else tasks.get(d.uid)!.stage = type === 'TaskCancelled' ? 'CANCELLED' : d.to;
    }
    // The history has no run held by a worker: every run ends queued, finished or cancelled.
    const runs = new Map<string, { factory: string | null; state: string }>();
    const runEvents = db.prepare(
      `SELECT type, json_extract(data, '$.run_id') AS id, json_extract(data, '$.factory_uid') AS factory, json_extract(data, '$.state') AS state
       FROM events WHERE type IN ('RunCreated', 'RunFinished', 'RunCancelled') ORDER BY position`,
    );
    for (const r of runEvents.iterate() as Iterable<{
      type: string;
      id: string;
      factory: string | null;
      state: string | null;
    }>) {
      if (r.type === 'RunCreated') runs.set(r.id, { factory: r.factory, state: 'QUEUED' });
      else runs.get(r.id)!.state = r.state ?? 'CANCELLED';
    }
    /** Conversations whose run has no task: each takes one task of the create case. */
    const free = db
      .prepare(
        `SELECT json_extract(data, '$.conversation_id') FROM events WHERE type = 'RunCreated' AND json_extract(data, '$.conversation_id') NOT IN
           (SELECT json_extract(data, '$.conversation_id') FROM events WHERE type = 'ConversationTaskBound') ORDER BY position`,
      )
      .pluck()
      .all() as string[];
    db.close();
    const taskUids = [...tasks.keys()];
    const runIds = [...runs.keys()];
    const any = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
    const taskPath = (uid: string) => `/api/v1/factory/${tasks.get(uid)!.factory}/tasks/${uid}`;
    const listPath = (factory: string) => `/api/v1/factory/${factory}/tasks?stage=${LIST_STAGE}&limit=50`;
    const runListPath = (factory: string) => `/api/v1/agent/runs?state=${RUN_STATE}&factory_uid=${factory}&limit=50`;

    const dir = tempDir('http');
    copyHistory(file, dir);
    log(
      `starting the server on ${fmt(info.events)} events (${fmt(tasks.size)} tasks, ${fmt(runs.size)} runs); the projector catches up first`,
    );
    const server = await startServer(dir, 'server-http');
    log(`ready after ${fmt(server.readyMs)} ms; the reactors passed the log ${fmt(server.reactorsMs)} ms later`);
    const bare = await startBare();
    // The CRUD peer holds the same team, key, factories and tasks, and conversations of its own to bind.
    const peerFile = path.join(dir, 'crud-peer.db');
    const peerFree = free.map(() => crypto.randomUUID());
    seedCrudPeer(peerFile, {
      keyHash: createHash('sha256').update(BENCH_ADMIN_KEY).digest('hex'),
      userUid: info.adminUid,
      teamUid: info.teamUid,
      factories,
      tasks: [...tasks].map(([uid, t]) => ({
        uid,
        factory: t.factory,
        stage: t.stage,
        conversation: crypto.randomUUID(),
      })),
      freeConversations: peerFree,
    });
    const peer = await startCrudPeer(peerFile);

    // The cursors of the pages after the first, as a client paging through the list gets them.
    const pages: Array<{ factory: string; cursor: string }> = [];
    for (const factory of factories) {
      for (let cursor = '', page = 0; page < LIST_PAGES; page++) {
        const next = ((await answerOf(server.base, `${listPath(factory)}${cursor}`)) as { page_info: PageInfo })
          .page_info.next_cursor;
        if (!next) break;
        pages.push({ factory, cursor: next });
        cursor = `&cursor=${next}`;
      }
    }

    const runStates = shares([...runs.values()].map((r) => r.state));
    const stages = shares([...tasks.values()].map((t) => t.stage));
    const listed = [...tasks.values()].filter((t) => t.stage === LIST_STAGE).length;
    const runsListed = [...runs.values()].filter((r) => r.state === RUN_STATE && r.factory).length / factories.length;
    let used = 0;
    let peerUsed = 0;
    let edits = 0;
    const cases: Case[] = [
      {
        name: 'GET /factory/{uid} (random factory: the cheapest query of the API, one authenticated read of one small document)',
        kind: 'query',
        reference: true,
        method: 'GET',
        path: `/api/v1/factory/${factories[0]}`,
        headers: authHeaders,
        vary: () => ({ path: `/api/v1/factory/${any(factories)}` }),
      },
      {
        name: 'GET /factory/{uid}/tasks/{task_uid} (random task)',
        kind: 'query',
        method: 'GET',
        path: taskPath(taskUids[0]!),
        headers: authHeaders,
        vary: () => ({ path: taskPath(any(taskUids)) }),
      },
      {
        name: 'GET /agent/runs/{run_id} (random run)',
        kind: 'query',
        method: 'GET',
        path: `/api/v1/agent/runs/${runIds[0]}`,
        headers: authHeaders,
        vary: () => ({ path: `/api/v1/agent/runs/${any(runIds)}` }),
      },
      {
        name: `GET /factory/{uid}/tasks?stage=${LIST_STAGE}&limit=50 (random factory, first page; ${pct(listed / tasks.size)} of the tasks match)`,
        kind: 'query',
        method: 'GET',
        path: listPath(factories[0]!),
        headers: authHeaders,
        vary: () => ({ path: listPath(any(factories)) }),
      },
      ...(pages.length
        ? [
            {
              name: `GET /factory/{uid}/tasks?stage=${LIST_STAGE}&limit=50&cursor=… (random factory, one of pages 2–${LIST_PAGES + 1})`,
              kind: 'query' as const,
              method: 'GET' as const,
              path: `${listPath(pages[0]!.factory)}&cursor=${pages[0]!.cursor}`,
              headers: authHeaders,
              vary: () => {
                const page = any(pages);
                return { path: `${listPath(page.factory)}&cursor=${page.cursor}` };
              },
            },
          ]
        : []),
      {
        name: `GET /agent/runs?state=${RUN_STATE}&factory_uid={uid}&limit=50 (random factory; matches ${pct(runsListed / runs.size)} of the runs)`,
        kind: 'query',
        method: 'GET',
        path: runListPath(factories[0]!),
        headers: authHeaders,
        vary: () => ({ path: runListPath(any(factories)) }),
      },
      {
        name: 'PATCH /factory/{uid}/tasks/{task_uid} (random task, to the stage after its own)',
        kind: 'command',
        method: 'PATCH',
        path: taskPath(taskUids[0]!),
        headers: authHeaders,
        vary: () => {
          const uid = any(taskUids);
          const task = tasks.get(uid)!;
          task.stage = STAGES[(STAGES.indexOf(task.stage) + 1) % STAGES.length]!;
          return { path: taskPath(uid), body: JSON.stringify({ stage: task.stage }) };
        },
      },
      {
        name: 'POST /factory/{uid}/tasks (create, on a conversation whose run has no task)',
        kind: 'command',
        method: 'POST',
        path: `/api/v1/factory/${factories[0]}/tasks`,
        headers: authHeaders,
        // Each conversation takes one task: once all are used, the next ones are refused (409).
        vary: () => ({
          path: `/api/v1/factory/${any(factories)}/tasks`,
          body: JSON.stringify({ title: 'Bench task', conversation_id: free[used++ % free.length] }),
        }),
      },
      {
        name: 'POST /agent/runs (create, in a new conversation)',
        kind: 'command',
        method: 'POST',
        path: '/api/v1/agent/runs',
        headers: authHeaders,
        body: JSON.stringify({ prompt: 'Fix the flaky checkout test and open a pull request.', title: 'Bench run' }),
      },
      {
        name: `PATCH /factory/{uid} (random factory of ${factories.length}: ${params.httpConnections / factories.length} writers on each stream at once)`,
        kind: 'command',
        reference: true,
        method: 'PATCH',
        path: `/api/v1/factory/${factories[0]}`,
        headers: authHeaders,
        vary: () => ({
          path: `/api/v1/factory/${any(factories)}`,
          body: JSON.stringify({ description: `Bench edit ${++edits}` }),
        }),
      },
    ];

    const hello: LoadCase = { method: 'GET', path: '/' };
    /** The same command on the CRUD peer: the same paths and bodies, its own conversations to bind. */
    const onPeer = (c: Case): LoadCase =>
      c.path.endsWith('/tasks') && c.method === 'POST'
        ? {
            ...c,
            vary: () => ({
              path: `/api/v1/factory/${any(factories)}/tasks`,
              body: JSON.stringify({ title: 'Bench task', conversation_id: peerFree[peerUsed++ % peerFree.length] }),
            }),
          }
        : c;
    const results: Array<{
      c: Case;
      r: LoadResult;
      open: LoadResult;
      same?: { r: LoadResult; bytes: number };
      crud?: LoadResult;
    }> = [];
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
        const steady = await paced(
          server.base,
          c,
          Math.min(PACED_MAX_RPS, Math.max(1, Math.round(r.rps / 4))),
          Math.min(5, params.httpSeconds),
        );
        const same =
          c.kind === 'query' ? await bareAnswering(bare.base, await sampleAnswers(server.base, c)) : undefined;
        // The peer does the same write right after, on the same machine's moment.
        const crud = c.kind === 'command' && !c.reference ? await load(peer.base, onPeer(c)) : undefined;
        results.push({ c, r, open: steady, same, crud });
      }
      bareAfter = await load(bare.base, hello);
      // The control of the open-loop figures: what the client and the machine add to any request.
      bareOpen = await paced(bare.base, hello, PACED_MAX_RPS, Math.min(5, params.httpSeconds));
      serverRss = rssMb(server.proc.pid);
    } finally {
      await server.proc.stop();
      await bare.proc.stop();
      await peer.proc.stop();
    }
    const bareRps = (bareBefore.rps + bareAfter.rps) / 2;
    const ceiling = { name: 'bare Fastify hello world', value: bareRps };
    const lat = (r: LoadResult) =>
      (r.requests > 0 ? `p50 ${r.p50} ms, p99 ${r.p99} ms` : 'no request answered within the 10 s timeout') +
      (r.failures ? `, **${fmt(r.failures)} failed: ${r.failureDetail}**` : '');

    const figures: Figure[] = [
      {
        name: 'Bare Fastify hello world (before the cases)',
        value: bareBefore.rps,
        unit: 'req/s',
        detail: lat(bareBefore),
      },
      {
        name: 'Bare Fastify hello world (after the cases)',
        value: bareAfter.rps,
        unit: 'req/s',
        detail: lat(bareAfter),
      },
      {
        name: 'Bare Fastify hello world, open loop (control for the open-loop latencies)',
        value: bareOpen.rps,
        unit: 'req/s',
        detail: lat(bareOpen),
      },
      ...results.flatMap(({ c, r, open, same, crud }): Figure[] => {
        const own = same ? same.r.rps : crud?.rps;
        const figure: Figure = {
          name: `${c.kind === 'command' ? 'Command' : 'Query'}${c.reference ? ' (reference)' : ''}: ${c.name}`,
          value: r.rps,
          unit: 'req/s',
          detail: `${lat(r)}; open loop at ${fmt(open.rps)} req/s: ${lat(open)}; ${pct(r.rps / bareRps)} of bare hello world`,
          ceiling:
            own === undefined
              ? ceiling
              : {
                  name: same ? 'bare Fastify sending its answers (next row)' : 'the CRUD peer (next row)',
                  value: own,
                },
          target:
            c.reference || own === undefined
              ? undefined
              : {
                  text: `≥ ${TARGET_SHARE * 100}% of ${same ? 'bare Fastify sending its answers' : 'the CRUD peer'}`,
                  met: r.rps / own >= TARGET_SHARE && r.failures === 0,
                },
        };
        const rows: Figure[] = [figure];
        if (same)
          rows.push({
            name: `↳ bare Fastify sending ${ANSWERS} of these answers (${fmt(same.bytes / 1024, 1)} KiB each on average)`,
            value: same.r.rps,
            unit: 'req/s',
            detail: lat(same.r),
            ceiling,
          });
        if (crud)
          rows.push({
            name: '↳ CRUD peer, the same write (state-stored Fastify + better-sqlite3, bench/lib/crud-peer.ts)',
            value: crud.rps,
            unit: 'req/s',
            detail: lat(crud),
            ceiling,
          });
        return rows;
      }),
    ];
    return {
      figures,
      notes: [
        `Server: \`node --import tsx src/main.ts\` on a copy of a generated log of ${fmt(info.events)} events (bench/lib/history.ts \`tasks-runs\`) with its reactors' effects appended once beforehand (lib/reacted-history.ts): ` +
          `the admin's team with ${factories.length} factories, each with a foreman agent; ${fmt(runs.size)} runs (${runStates}); ` +
          `${fmt(tasks.size)} tasks spread over the factories, each bound to the conversation of one of those runs (${stages}). LOG_LEVEL=${params.logLevel}; ready (read models caught up) ${fmt(server.readyMs / 1000, 1)} s after spawn, then ${fmt(server.reactorsMs / 1000, 1)} s more for the reactors' first pass over the log, before any case (measured during it, the queries shared the cores with it). RSS after the cases: ${fmt(serverRss)} MiB.`,
        `Load: autocannon in the benchmark process, ${params.httpConnections} connections, ${params.httpSeconds} s per case after a short warm-up, ` +
          `127.0.0.1 only; load generator and server share the machine's cores, as in the bare runs. Latencies have autocannon's 1 ms resolution.`,
        `The ceiling is the mean of the two bare runs. After each query, bare Fastify answers with ${ANSWERS} of that query's own answers ` +
          `(fetched from the server, held as objects, one picked at random per request and serialized as any route's answer): ` +
          `a route that builds its answer as an object cannot go faster, so that row's share of hello world bounds the query's. Cases run in the order shown: the queries on the history as generated, then the commands ` +
          `(the harness also waits, at most 60 s, for the server to answer /healthz promptly before and after each case). The paging case reads ` +
          `pages with the cursors a client paging from the first page got (${fmt(pages.length)} of them). PATCH moves each task it picks to the next stage ` +
          `(CANCELLED wraps round to TRIAGE), so every request changes it. POST /factory/{uid}/tasks needs a conversation with a run and no task: ` +
          `the history has ${fmt(free.length)} (its runs without a task), each used once; the case and its open-loop run used ${fmt(used)}` +
          `${used > free.length ? ', more than there are, so the rest were refused' : ''}. POST /agent/runs creates a run in a new conversation.`,
        `Targets (issue #25): a query at least ${TARGET_SHARE * 100}% of bare Fastify sending that query's own answers (its payload ceiling); a command at least ${TARGET_SHARE * 100}% of the CRUD peer doing the same write right after it: ` +
          'bench/lib/crud-peer.ts, what a user would build instead of event sourcing: plain Fastify + better-sqlite3 in a process of its own, one row per run and per task updated in one transaction per request, ' +
          "WAL with synchronous=FULL (an fsync per commit, as Shopfloor's event store), the Bearer key looked up by its SHA-256, and Shopfloor's own zod bodies through fastify-type-provider-zod. " +
          `It is seeded with the same team, key, factories and ${fmt(tasks.size)} tasks, and conversations of its own for the create-task case (${fmt(peerUsed)} used). No event, read model or history.`,
        `Two reference rows, with no target: GET /factory/{uid}, the least any authenticated query does (every other query reads more, so its share of hello world is about the most any query reaches on this machine); ` +
          `and PATCH /factory/{uid} over the history's ${factories.length} factories, so that many writers change one stream at once: ` +
          `commands on one stream are handled one at a time in the server (src/kernel/per-key-queue.ts), and each folds only the events it has not folded yet (src/kernel/stream-states.ts); a 409 there would show as a failure.`,
        `With ${params.httpConnections} connections each waiting for its answer, latency is connections / throughput (Little's law): ` +
          `p99 < 10 ms needs more than ${fmt(params.httpConnections / 0.01)} req/s and p99 < 5 ms more than ${fmt(params.httpConnections / 0.005)} req/s. ` +
          `So each case is run again open loop: requests sent evenly at a quarter of its throughput (at most ${fmt(PACED_MAX_RPS)} a second: past about 2,000 one client falls behind its own schedule) for 5 s, from one keep-alive fetch client in a lean process of its own ` +
          `(in the benchmark process, its scavenges paused it for 5-11 ms every ~115 ms), warmed up by one second of the same requests, untimed (while its pool of connections grows, requests wait up to hundreds of ms), ` +
          `each timed from its scheduled start (0.1 ms resolution): the latency of a request that does not queue behind 49 others. ` +
          `Targets are judged on the full-speed run.`,
      ],
    };
  },
};
export default workload;
