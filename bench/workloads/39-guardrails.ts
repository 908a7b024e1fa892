/**
 * Budgets under contention (issue #33). Three server processes on one store; starts (POST
 * /agent/runs) sent 30 at a time, spread over the three, for a team without a budget (the ceiling:
 * the same start without the budget's period stream) and for a team whose budget has room for them
 * all, where every start appends to that one stream and processes collide. Then a budget with room
 * for a third of the starts: exactly that many must start, the rest 402, none 409 or 500.
 */
import { QUICK } from '../lib/config.js';
import { fmt, latencySummary, log, now } from '../lib/measure.js';
import { authHeaders, type Server, startServer } from '../lib/server.js';
import { tempDir } from '../lib/tmp.js';
import type { Workload } from '../lib/workload.js';

const STARTS = QUICK ? 90 : 300;
const AT_ONCE = 30;

async function newTeam(base: string, name: string): Promise<string> {
  const res = await fetch(`${base}/api/v1/teams`, {
    method: 'POST',
    headers: authHeaders,
    body: JSON.stringify({ name }),
  });
  return ((await res.json()) as { uid: string }).uid;
}

/** STARTS starts for `team`, AT_ONCE at a time, round robin over the servers: per second, latencies, statuses. */
async function starts(servers: Server[], team: string) {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const started = now();
  for (let sent = 0; sent < STARTS; sent += AT_ONCE) {
    await Promise.all(
      Array.from({ length: Math.min(AT_ONCE, STARTS - sent) }, async (_, i) => {
        const t0 = now();
        const res = await fetch(`${servers[(sent + i) % servers.length]!.base}/api/v1/agent/runs`, {
          method: 'POST',
          headers: { ...authHeaders, 'x-service-team-uid': team },
          body: JSON.stringify({ prompt: 'bench' }),
        });
        await res.arrayBuffer();
        latencies.push(now() - t0);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }),
    );
  }
  const ms = now() - started;
  return { perSecond: (STARTS * 1000) / ms, ...latencySummary(latencies), statuses };
}

const putBudget = (base: string, team: string, body: Record<string, number>) =>
  fetch(`${base}/api/v1/teams/${team}/budget`, { method: 'PUT', headers: authHeaders, body: JSON.stringify(body) });

const shown = (s: Map<number, number>) => [...s].map(([status, n]) => `${status}×${n}`).join(', ');

const workload: Workload = {
  title: 'Guardrails: run starts against a budget, three processes on one store (issue #33)',
  async run() {
    const dir = tempDir('guardrails');
    const first = await startServer(dir, 'server-guardrails-1');
    const servers = [
      first,
      await startServer(dir, 'server-guardrails-2'),
      await startServer(dir, 'server-guardrails-3'),
    ];
    try {
      const free = await newTeam(first.base, 'no budget');
      const budgeted = await newTeam(first.base, 'budget with room');
      const tight = await newTeam(first.base, 'budget for a third');
      await putBudget(first.base, budgeted, { monthly_usd: 1_000_000, per_run_usd: 1 });
      await putBudget(first.base, tight, { monthly_usd: STARTS / 3, per_run_usd: 1 });
      const ceiling = await starts(servers, free);
      const guarded = await starts(servers, budgeted);
      const refused = await starts(servers, tight);
      log(
        `no budget ${fmt(ceiling.perSecond)}/s, budget ${fmt(guarded.perSecond)}/s; tight: ${shown(refused.statuses)}`,
      );
      const exact = refused.statuses.get(200) === STARTS / 3 && refused.statuses.get(402) === (STARTS * 2) / 3;
      return {
        figures: [
          {
            name: 'starts against a budget, 3 processes, 30 at a time',
            value: guarded.perSecond,
            unit: 'starts/s',
            detail: `p50 ${fmt(guarded.p50, 1)} ms, p99 ${fmt(guarded.p99, 1)} ms, max ${fmt(guarded.max, 1)} ms; ${shown(guarded.statuses)}`,
            ceiling: { name: 'the same starts without a budget', value: ceiling.perSecond },
            target: {
              text: '≥ 50% of the ceiling, every answer 200',
              met: guarded.perSecond >= ceiling.perSecond / 2 && guarded.statuses.get(200) === STARTS,
            },
          },
          {
            name: `a budget with room for ${STARTS / 3} of ${STARTS} starts`,
            value: refused.statuses.get(200) ?? 0,
            unit: 'started',
            detail: shown(refused.statuses),
            target: { text: `exactly ${STARTS / 3} started, the rest 402`, met: exact },
          },
        ],
        notes: [
          `Ceiling (no budget): ${fmt(ceiling.perSecond)} starts/s, p50 ${fmt(ceiling.p50, 1)} ms, p99 ${fmt(ceiling.p99, 1)} ms; ${shown(ceiling.statuses)}.`,
          'Every start of a budgeted team appends to the budget period stream; two processes colliding retry with a delay derived from the run id.',
        ],
      };
    } finally {
      for (const s of servers) await s.proc.stop();
    }
  },
};

export default workload;
