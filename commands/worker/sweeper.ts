/**
 * Takes runs back from workers that stopped answering. The rule:
 * - a run handed to a worker (PENDING) and not acknowledged within the lease goes back to the
 *   queue (`ExpireLease`);
 * - a worker that missed MISSED_HEARTBEATS heartbeats in a row loses every run it holds
 *   (`LoseWorker`): a run it never started is queued again, a run in progress becomes ERROR
 *   (`resource_unavailable`, retryable), since its work may be half done.
 * The write side decides each case again from the run's stream, so a sweep that races a worker's
 * own report changes nothing it should not. One process of the store sweeps at a time (the
 * `worker_sweeper` lease); whichever process a worker's heartbeats reach, its presence is the
 * store's, so the sweeper sees it.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { timeOrderedId } from '../../src/ids.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { runDecider, type RunCommand, type RunDeciderState } from '../run/public.js';
import { runStream } from '../run/events.js';
import { PRESENCE, type PresenceDoc, Presences } from './presence-store.js';
import { type Holding, MISSED_HEARTBEATS, type WorkerRegistry } from './registry.js';

const sweeperContext = (h: Holding, now: number): CommandContext => ({
  now: new Date(now).toISOString(),
  actor: { type: 'system', uid: 'worker-sweeper' },
  teams: {},
  team_uid: h.team_uid || null,
  correlation_id: timeOrderedId(),
  causation_id: null,
  request_id: null,
});

/** One sweep; `since`: when this process began sweeping (workers count as seen then at the latest). */
async function sweep(rt: Runtime, registry: WorkerRegistry, presences: Presences, since: number): Promise<void> {
  const now = Date.now();
  const holdings = registry.allHoldings();
  const ids = [...new Set(holdings.map((h) => Presences.idOf(h.team_uid, h.worker_id)))];
  const present = ids.length
    ? await rt.docs.collection<PresenceDoc>(PRESENCE).getMany(ids)
    : new Map<string, PresenceDoc>();
  for (const h of holdings) {
    const { run_id, worker_id } = h;
    let command: RunCommand | null = null;
    if (h.state === 'PENDING' && h.lease_expires_ms !== null && h.lease_expires_ms <= now)
      command = { type: 'ExpireLease', data: { run_id, worker_id } };
    else if (presences.isGone(present.get(Presences.idOf(h.team_uid, worker_id)) ?? null, now, since))
      command = { type: 'LoseWorker', data: { run_id, worker_id } };
    if (!command) continue;
    try {
      const handled = await rt.execute(runStream(run_id), runDecider, command, sweeperContext(h, now));
      // Nothing to take back: the worker moved on in the meantime, or the holding was stale.
      const state: RunDeciderState = handled.state;
      if (handled.events.length === 0 && state.status === 'live') registry.sync(run_id, state);
    } catch (error) {
      rt.log.error({ err: error, run_id, worker_id }, 'worker sweep failed; retrying on the next tick');
    }
  }
  registry.forgetSignals(now);
  // Workers gone that hold nothing are forgotten (a worker id minted per connection would pile up).
  const cutoff = now - MISSED_HEARTBEATS * rt.config.WORKER_HEARTBEAT_SECONDS * 1000;
  if (since < cutoff) {
    const holders = new Set(registry.allHoldings().map((h) => Presences.idOf(h.team_uid, h.worker_id)));
    await presences.forgetGone(cutoff, (team, worker) => holders.has(Presences.idOf(team, worker)));
  }
}

/** Sweeps every half interval until `signal` aborts. */
export async function runSweeper(
  rt: Runtime,
  registry: WorkerRegistry,
  presences: Presences,
  signal: AbortSignal,
): Promise<void> {
  const since = Math.max(presences.since, Date.now());
  const { heartbeatSeconds, leaseSeconds } = registry.timings;
  const everyMs = Math.max(25, (Math.min(heartbeatSeconds, leaseSeconds) * 1000) / 2);
  while (!signal.aborted) {
    await delay(everyMs, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) break;
    await sweep(rt, registry, presences, since).catch((error: unknown) =>
      rt.log.error({ err: error }, 'worker sweep failed; retrying on the next tick'),
    );
  }
}
