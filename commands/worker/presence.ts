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
import { runsProjection, type RunDoc } from '../../projections/runs.js';
import { teamsProjection } from '../../projections/teams.js';
import { HELD_STATES, runStream } from '../run/events.js';
import { MISSED_HEARTBEATS, WorkerRegistry } from './registry.js';
import { runSweeper } from './sweeper.js';

/** Workers' presence: shared state of the store's processes, not a read model (no event makes it). */
export const PRESENCE = 'worker_presence';

/** A signal the worker acknowledged, and the run it was about (null: unknown to the process it reached). */
interface Ack {
  signal_id: string;
  run_id: string | null;
  at: number;
}

export interface PresenceDoc {
  [field: string]: unknown;
  worker_id: string;
  team_uid: string;
  /** The agent whose API key announced the worker. */
  agent_uid: string;
  host: string;
  capabilities: string[];
  connected_at: string;
  last_heartbeat_at: string;
  /** The last request of any kind (ms since the epoch). */
  seen_ms: number;
  /** Signals it acknowledged, kept while some process may still hold them pending (absent: none). */
  acks?: Ack[];
}

/** Acknowledgements kept at least this long, whatever their run, and never more than this many. */
const ACK_KEPT_MS = 10 * 60_000;
const MAX_ACKS = 1000;
const RETRY_AFTER_FAILURE_MS = 1000;

/** The stored presence of workers, with the rule of when one is gone. */
export class Presences {
  private readonly docs;
  private readonly touched = new Map<string, number>();
  private readonly goneAfterMs: number;
  private readonly touchEveryMs: number;

  constructor(
    private readonly rt: Runtime,
    /** When this process started: absent workers count as seen then, so that they may come back. */
    readonly since = Date.now(),
  ) {
    this.docs = rt.docs.collection<PresenceDoc>(PRESENCE);
    this.goneAfterMs = MISSED_HEARTBEATS * rt.config.WORKER_HEARTBEAT_SECONDS * 1000;
    this.touchEveryMs = Math.min(1000, (rt.config.WORKER_HEARTBEAT_SECONDS * 1000) / 4);
  }

  static idOf = (teamUid: string, workerId: string) => `${teamUid}:${workerId}`;

  get(teamUid: string, workerId: string): Promise<PresenceDoc | null> {
    return this.docs.get(Presences.idOf(teamUid, workerId));
  }

  /** True once a worker (present, or only named by what it holds) has missed enough heartbeats. */
  isGone(presence: Pick<PresenceDoc, 'seen_ms'> | null, now = Date.now(), since = this.since): boolean {
    return now - Math.max(presence?.seen_ms ?? 0, since) > this.goneAfterMs;
  }

  /** The team's workers seen within the last missed heartbeats, oldest connection first. */
  async live(teamUid: string, now = Date.now()): Promise<PresenceDoc[]> {
    const live: PresenceDoc[] = [];
    const seen = findEach(this.docs, {
      filter: { team_uid: teamUid, seen_ms: { $gte: now - this.goneAfterMs } },
      sort: [
        ['seen_ms', 'asc'],
        ['id', 'asc'],
      ],
      limit: 200,
    });
    for await (const w of seen) live.push(w);
    return live.sort((a, b) => a.connected_at.localeCompare(b.connected_at) || a.worker_id.localeCompare(b.worker_id));
  }

  countLive(teamUid: string, now = Date.now()): Promise<number> {
    return this.docs.count({ team_uid: teamUid, seen_ms: { $gte: now - this.goneAfterMs } });
  }

  /** Announces a worker (again): present from now on; what it acknowledged stays. */
  async announce(worker: Pick<PresenceDoc, 'worker_id' | 'team_uid' | 'agent_uid' | 'host' | 'capabilities'>) {
    const now = Date.now();
    const at = new Date(now).toISOString();
    const id = Presences.idOf(worker.team_uid, worker.worker_id);
    await this.rt.docs.update(PRESENCE, id, {
      set: { ...worker, connected_at: at, last_heartbeat_at: at, seen_ms: now },
      upsert: true,
    });
    this.touched.set(id, now);
  }

  /** Any request of a worker is a sign of life: recorded at most every so often, in the background. */
  touch(teamUid: string, workerId: string, now = Date.now()): void {
    const id = Presences.idOf(teamUid, workerId);
    if (now - (this.touched.get(id) ?? 0) < this.touchEveryMs) return;
    this.touched.set(id, now);
    if (this.touched.size > 10_000) this.touched.clear();
    this.rt.docs
      .update(PRESENCE, id, { set: { seen_ms: now, last_heartbeat_at: new Date(now).toISOString() } })
      .catch((error: unknown) =>
        this.rt.log.warn({ err: error, worker_id: workerId }, 'could not record a worker seen'),
      );
  }

  /**
   * A heartbeat: seen now, and the acknowledgements to keep. One is kept while its run is held by
   * the worker or still listed by it (a process that lags may still hold the signal pending), or
   * for ten minutes, whichever is longer.
   */
  async heartbeat(presence: PresenceDoc, given: readonly string[], keep: (ack: Ack) => boolean, now = Date.now()) {
    const known = new Map((presence.acks ?? []).map((a) => [a.signal_id, a]));
    for (const signal_id of given)
      if (!known.has(signal_id)) known.set(signal_id, { signal_id, run_id: null, at: now });
    const acks = [...known.values()].filter((a) => keep(a) || now - a.at < ACK_KEPT_MS).slice(-MAX_ACKS);
    const id = Presences.idOf(presence.team_uid, presence.worker_id);
    this.touched.set(id, now);
    await this.rt.docs.update(PRESENCE, id, {
      set: { seen_ms: now, last_heartbeat_at: new Date(now).toISOString(), acks },
    });
  }

  /** Forgets workers gone since before `cutoff` that hold nothing (`holds`), a page at a time. */
  async forgetGone(cutoff: number, holds: (teamUid: string, workerId: string) => boolean): Promise<void> {
    const page = await this.docs.find({
      filter: { seen_ms: { $lt: cutoff } },
      sort: [
        ['seen_ms', 'asc'],
        ['id', 'asc'],
      ],
      limit: 100,
    });
    for (const w of page.items) {
      if (!holds(w.team_uid, w.worker_id))
        await this.rt.docs.remove(PRESENCE, Presences.idOf(w.team_uid, w.worker_id), { seen_ms: { $lt: cutoff } });
    }
  }
}

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
  return workers;
}
