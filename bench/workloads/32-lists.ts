/**
 * 3a. Lists cost what their page costs (issue #25): one store holding a large team (`listsLarge`
 * runs, 100,000 by default) and a small one (`listsSmall`, 1,000), their runs interleaved in
 * time, the admin a member of both. Each list's first page and its next page are read for each
 * team in turn (small, large, small, large: paired rounds on the same server), through the real
 * server process with autocannon; the large team's page may cost at most 20% more than the
 * small team's (throughput small / large ≤ 1.2).
 */
import Database from 'better-sqlite3';
import type { PageInfo } from '../../src/http/cursor.js';
import { params } from '../lib/config.js';
import { fmt, log } from '../lib/measure.js';
import { cachedReactedHistory } from '../lib/reacted-history.js';
import { copyHistory } from '../lib/seed.js';
import { authHeaders, load, type LoadResult, startServer } from '../lib/server.js';
import { tempDir } from '../lib/tmp.js';
import type { Figure, Workload } from '../lib/workload.js';

/** How much more the large team's page may cost than the small team's. */
const MAX_EXTRA = 0.2;
const ROUNDS = 2;

const workload: Workload = {
  title: '3a. Lists: a team of 1,000 runs beside one of 100,000',
  async run() {
    const { file, info } = await cachedReactedHistory('two-teams', params.listsLarge, params.listsSmall);
    const [largeFactory, smallFactory] = info.factoryUids!;
    const teams = [
      { name: 'small', uid: info.smallTeamUid!, factory: smallFactory!, runs: params.listsSmall },
      { name: 'large', uid: info.teamUid, factory: largeFactory!, runs: params.listsLarge },
    ] as const;
    const db = new Database(file, { readonly: true });
    const tasksOf = (factory: string) =>
      db
        .prepare(`SELECT count(*) FROM events WHERE type = 'TaskCreated' AND json_extract(data, '$.factory_uid') = ?`)
        .pluck()
        .get(factory) as number;
    const taskCounts = teams.map((t) => tasksOf(t.factory));
    db.close();

    const dir = tempDir('lists');
    copyHistory(file, dir);
    log(`starting the server on ${fmt(info.events)} events; the projector catches up first`);
    const server = await startServer(dir, 'server-lists');
    log(`ready after ${fmt(server.readyMs)} ms; the reactors passed the log ${fmt(server.reactorsMs)} ms later`);

    const lists: Array<{ name: string; path: (factory: string) => string }> = [
      { name: 'GET /agent/runs?limit=20 (newest updated first)', path: () => '/api/v1/agent/runs?limit=20' },
      { name: 'GET /agent/runs?state=FAILED&limit=20', path: () => '/api/v1/agent/runs?state=FAILED&limit=20' },
      {
        name: 'GET /agent/runs?factory_uid={uid}&limit=20',
        path: (f) => `/api/v1/agent/runs?factory_uid=${f}&limit=20`,
      },
      {
        name: 'GET /agent/runs?sort_by=title&sort_order=asc&limit=20',
        path: () => '/api/v1/agent/runs?sort_by=title&sort_order=asc&limit=20',
      },
      { name: 'GET /factory/{uid}/tasks?limit=20', path: (f) => `/api/v1/factory/${f}/tasks?limit=20` },
      {
        name: 'GET /factory/{uid}/tasks?stage=IMPLEMENT&limit=20',
        path: (f) => `/api/v1/factory/${f}/tasks?stage=IMPLEMENT&limit=20`,
      },
    ];

    const figures: Figure[] = [];
    const seconds = Math.max(1, Math.round(params.httpSeconds / 3));
    try {
      for (const list of lists) {
        for (const page of ['first', 'next'] as const) {
          const cases = await Promise.all(
            teams.map(async (team) => {
              const headers = { ...authHeaders, 'x-service-team-uid': team.uid };
              let path = list.path(team.factory);
              if (page === 'next') {
                const res = await fetch(`${server.base}${path}`, { headers });
                const next = ((await res.json()) as { page_info: PageInfo }).page_info.next_cursor;
                if (!next) throw new Error(`${list.name}: the ${team.name} team has one page only`);
                path = `${path}&cursor=${next}`;
              }
              return { team, c: { method: 'GET' as const, path, headers } };
            }),
          );
          const rounds: Record<'small' | 'large', LoadResult[]> = { small: [], large: [] };
          for (let round = 0; round < ROUNDS; round++)
            for (const { team, c } of cases) rounds[team.name].push(await load(server.base, c, seconds));
          const rps = (rs: LoadResult[]) => rs.reduce((n, r) => n + r.rps, 0) / rs.length;
          const small = rps(rounds.small);
          const large = rps(rounds.large);
          const pairs = rounds.small.map((s, i) => s.rps / rounds.large[i]!.rps);
          const lat = (rs: LoadResult[]) => rs.map((r) => `p50 ${r.p50} ms, p99 ${r.p99} ms`).join(' / ');
          figures.push(
            {
              name: `${list.name}, ${page} page: small team`,
              value: small,
              unit: 'req/s',
              detail: `rounds ${rounds.small.map((r) => fmt(r.rps)).join(', ')}; ${lat(rounds.small)}`,
            },
            {
              name: `↳ the same, large team`,
              value: large,
              unit: 'req/s',
              detail: `rounds ${rounds.large.map((r) => fmt(r.rps)).join(', ')}; ${lat(rounds.large)}; a page costs the large team ${fmt(small / large, 2)}× the small team's (paired rounds ${pairs.map((p) => fmt(p, 2)).join(', ')})`,
              ceiling: { name: 'the small team', value: small },
              target: {
                text: `costs at most ${MAX_EXTRA * 100}% more than the small team's (ratio ≥ ${fmt(1 / (1 + MAX_EXTRA), 2)})`,
                met:
                  small / large <= 1 + MAX_EXTRA && [...rounds.small, ...rounds.large].every((r) => r.failures === 0),
              },
            },
          );
        }
      }
    } finally {
      await server.proc.stop();
    }
    return {
      figures,
      notes: [
        `History (bench/lib/history.ts \`two-teams\`, ${fmt(info.events)} events): the admin's team with ${fmt(teams[1].runs)} runs and a second team of the admin's with ${fmt(teams[0].runs)}, ` +
          `interleaved in time; each team has one factory and its foreman, to which a third of its runs are dispatched, each of those bound to a task ` +
          `(${fmt(taskCounts[1]!)} and ${fmt(taskCounts[0]!)} tasks); runs end in every state (FAILED about 12%). The team is chosen with X-Service-Team-Uid.`,
        `Each page is read by autocannon (${params.httpConnections} connections, ${seconds} s after a short warm-up) for the small team, then the large, ${ROUNDS} rounds; a figure is the mean of its rounds. ` +
          "The next page is the one the first page's cursor opens. The target compares throughputs: the large team's page costs small / large times the small team's. " +
          "Webhook deliveries, a run's artifacts and a conversation's messages are lists of one webhook, run or conversation, whatever its team holds; test/list-plans.test.ts shows each reads through an index.",
      ],
    };
  },
};
export default workload;
