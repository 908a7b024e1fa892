/**
 * The worker side's gauges, read when Prometheus scrapes: workers connected, and runs queued,
 * claimed (leased or acknowledged) and running, over all teams (no team is a label).
 */
import type { Runtime } from '../../src/runtime.js';
import { runsProjection } from '../run/public.js';
import { teamsProjection } from '../team/public.js';
import type { Presences } from './presence-store.js';
import type { WorkerRegistry } from './registry.js';

/** Queued runs, counted team by team through the (executing team, state) index: never a scan of all runs. */
async function countQueued(rt: Runtime): Promise<number> {
  const runs = rt.readModel(runsProjection);
  let queued = 0;
  for await (const [team] of rt.readModel(teamsProjection).scan())
    queued += await runs.count({ executing_team_uid: team, state: 'QUEUED' });
  return queued;
}

export function measureWorkers(rt: Runtime, registry: WorkerRegistry, presences: Presences): void {
  rt.metrics.gauge({
    name: 'shopfloor_workers_connected',
    help: 'Workers of every team that heartbeated within the last three intervals',
    async collect() {
      this.set(await presences.countAllLive());
    },
  });
  rt.metrics.gauge({
    name: 'shopfloor_runs',
    help: 'Runs waiting for a worker (queued), leased or acknowledged by one (claimed) and running',
    labelNames: ['state'],
    async collect() {
      const held = registry.allHoldings();
      this.set({ state: 'queued' }, await countQueued(rt));
      this.set({ state: 'claimed' }, held.filter((h) => h.state !== 'INPROGRESS').length);
      this.set({ state: 'running' }, held.filter((h) => h.state === 'INPROGRESS').length);
    },
  });
}
