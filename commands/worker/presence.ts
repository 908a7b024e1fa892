/**
 * The worker side of the runtime: who is connected (presence, kept in the read store so that every
 * process of a store sees every worker), the registry of what the log says they hold (kept in step
 * with the run events from the head of the log on, in every process), and the sweeper (in one
 * process of the store at a time). The worker routes find it through `workersOf(rt)`.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { comparePositions, type Position, type RecordedEvent, START } from '../../src/eventstore/port.js';
import { DomainError } from '../../src/kernel/errors.js';
import { findEach } from '../../src/readstore/paging.js';
import type { Runtime } from '../../src/runtime.js';
import { runsProjection, type RunDoc } from '../run/public.js';
import { teamsProjection } from '../team/public.js';
import { HELD_STATES, runStream } from '../run/events.js';
import { WorkerRegistry } from './registry.js';
import { PRESENCE, Presences } from './presence-store.js';
import { runSweeper } from './sweeper.js';
import { measureWorkers } from './metrics.js';

const RETRY_AFTER_FAILURE_MS = 1000;

export interface Workers {
  registry: WorkerRegistry;
  presences: Presences;
  /** Resolves once the runs held before start-up are known. */
  ready: Promise<void>;
  /** Resolves once the registry has folded every event appended so far (by any process). */
  synced(): Promise<void>;
  stop(): Promise<void>;
}

const started = new WeakMap<Runtime, Workers>();

/** The running worker side of `rt`, if it was started. */
export const runningWorkers = (rt: Runtime): Workers | undefined => started.get(rt);

/** The running worker side of `rt`; a 503 when it was not started. */
export function workersOf(rt: Runtime): Workers {
  const workers = runningWorkers(rt);
  if (!workers)
    throw new DomainError(503, 'resource_unavailable', 'Workers unavailable', 'The worker registry is not running');
  return workers;
}

/** Waits until the read models show `position`, however long a rebuild takes. */
async function caughtUp(rt: Runtime, position: Position, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      return await rt.projector.waitFor(position);
    } catch {
      // still catching up: keep waiting
    }
  }
}

/**
 * The runs held when the log was at `head`, from the read model, with their pending signals. Read
 * team by team through the (executing team, state) index: a filter on state alone would scan
 * every run in one synchronous statement (1.8 s on 226k runs, with the event loop blocked).
 */
async function adoptHeldRuns(rt: Runtime, registry: WorkerRegistry): Promise<void> {
  const runs = rt.readModel(runsProjection);
  const teams = rt.readModel(teamsProjection);
  for await (const [team] of teams.scan()) {
    const held = findEach(runs, {
      filter: { executing_team_uid: team, state: { $in: HELD_STATES } },
      sort: [['id', 'asc']],
      limit: 500,
    });
    for await (const run of held) await adopt(rt, registry, run);
  }
}

async function adopt(rt: Runtime, registry: WorkerRegistry, run: RunDoc): Promise<void> {
  if (!run.worker_id || !run.execution_id) return;
  const pending = run.state === 'PENDING';
  registry.hold({
    run_id: run.run_id,
    worker_id: run.worker_id,
    execution_id: run.execution_id,
    team_uid: run.executing_team_uid,
    state: run.state as 'PENDING' | 'CLAIMED' | 'INPROGRESS',
    // The lease's own expiry is in the stream; a fresh one gives the worker time to come back.
    lease_expires_ms: pending ? Date.now() + registry.timings.leaseSeconds * 1000 : null,
    since: START,
  });
  if (!pending) {
    const events = await rt.events.readStream(runStream(run.run_id));
    registry.apply(events.filter((e) => e.type === 'RunFollowupDelivered' || e.type === 'RunInterruptRequested'));
  }
}

/**
 * Follows the log from `head`: holdings and signals at once, wake-ups once the read models show
 * them (a run queued through any process wakes the claims waiting here). `at` is told how far.
 */
async function follow(
  rt: Runtime,
  registry: WorkerRegistry,
  head: Position,
  signal: AbortSignal,
  at: (position: Position) => void,
): Promise<void> {
  const runs = rt.readModel(runsProjection);
  let position = head;
  while (!signal.aborted) {
    try {
      for await (const batch of rt.events.subscribe(position, signal, 500)) {
        const queued = registry.apply(batch);
        position = (batch.at(-1) as RecordedEvent).position;
        at(position);
        if (!queued.length) continue;
        await caughtUp(rt, position, signal);
        const unknown = queued.filter((q) => !q.team_uid).map((q) => q.run_id);
        const docs = unknown.length ? await runs.getMany(unknown) : new Map<string, RunDoc>();
        const teams = new Set(queued.map((q) => q.team_uid ?? docs.get(q.run_id)?.executing_team_uid));
        for (const team of teams) if (team) registry.wakeTeam(team);
      }
    } catch (error) {
      if (signal.aborted) return;
      rt.log.error({ err: error }, 'worker registry lost the event log; resuming');
      await delay(RETRY_AFTER_FAILURE_MS);
    }
  }
}

export function startWorkers(rt: Runtime): Workers {
  const presences = new Presences(rt);
  const registry = new WorkerRegistry(
    { heartbeatSeconds: rt.config.WORKER_HEARTBEAT_SECONDS, leaseSeconds: rt.config.WORKER_LEASE_SECONDS },
    (team, worker) => presences.touch(team, worker),
  );
  const abort = new AbortController();
  // How far the registry has folded the log, and who waits for it to get somewhere.
  let folded: Position | null = null;
  let waiting: Array<{ position: Position; resolve(): void }> = [];
  const foldedTo = (position: Position) => {
    folded = position;
    const reached = waiting.filter((w) => comparePositions(position, w.position) >= 0);
    waiting = waiting.filter((w) => !reached.includes(w));
    for (const w of reached) w.resolve();
  };
  const ready = (async () => {
    await rt.docs.ensureCollection(PRESENCE, [['team_uid', 'seen_ms'], ['seen_ms']]);
    const head = await rt.events.headPosition();
    await caughtUp(rt, head, abort.signal);
    await adoptHeldRuns(rt, registry).catch((error: unknown) =>
      rt.log.error({ err: error }, 'could not adopt the runs held before start-up'),
    );
    foldedTo(head);
    return head;
  })();
  // The sweeper runs in one process of the store at a time.
  const sweeper = ready.then(() =>
    rt.exclusive('worker_sweeper', ({ signal }) =>
      runSweeper(rt, registry, presences, AbortSignal.any([signal, abort.signal])),
    ),
  );
  const loops = ready.then((head) => follow(rt, registry, head, abort.signal, foldedTo));
  for (const p of [sweeper, loops])
    p.catch((error: unknown) => rt.log.error({ err: error }, 'the worker side could not start'));
  const workers: Workers = {
    registry,
    presences,
    ready: ready.then(
      () => undefined,
      () => undefined,
    ),
    async synced() {
      const head = await rt.events.headPosition();
      if (folded && comparePositions(folded, head) >= 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5000); // never hold a heartbeat longer than that
        waiting.push({ position: head, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
    async stop() {
      abort.abort();
      registry.close();
      await (await sweeper.catch(() => null))?.stop();
      await loops.catch((error: unknown) => rt.log.error({ err: error }, 'worker side stopped with an error'));
      for (const w of waiting) w.resolve();
      started.delete(rt);
    },
  };
  started.set(rt, workers);
  measureWorkers(rt, registry, presences);
  return workers;
}
