/**
 * What the log says workers hold right now: the runs handed out (holdings), the signals waiting
 * for their workers, and the claim requests waiting for a queued run, in this process.
 *
 * Holdings and signals are history: every process folds them here from the run events (from the
 * head of the log on, plus the held runs found in the `runs` read model at start), so whichever
 * process a worker's request reaches knows whose runs are whose, and after a restart the sweeper
 * still knows whose runs to take back when their worker never returns. Signals are kept until the
 * worker acknowledges them; at start those of held runs are read back from their streams, so a
 * restart loses none (a worker may see a signal twice and drops repeats by `signal_id`). What a
 * worker says about itself (its presence, its acknowledgements) is not history: that is kept in
 * the read store for every process to share (presence.ts).
 *
 * A worker id is chosen by its worker, so it names a worker within its team only: everything here
 * is keyed by team and id, and two teams may use one id without meeting (or learning of) each other.
 */
import { comparePositions, type Position, type RecordedEvent } from '../../src/eventstore/port.js';
import type { RunEvent, RunMode } from '../run/events.js';

/** A worker that missed this many heartbeats in a row is gone. */
export const MISSED_HEARTBEATS = 3;
/** Live workers one team may have at a time. */
export const MAX_WORKERS_PER_TEAM = 100;

type HeldState = 'PENDING' | 'CLAIMED' | 'INPROGRESS';

export interface Holding {
  run_id: string;
  worker_id: string;
  execution_id: string;
  team_uid: string;
  state: HeldState;
  /** When a PENDING run goes back to the queue unless acknowledged (ms since the epoch). */
  lease_expires_ms: number | null;
  /** Where the lease was recorded: older events of the run say nothing about this holding. */
  since: Position;
}

/** Why a worker must stop an execution. */
export type StopCause = 'cancelled' | 'lease_expired' | 'worker_lost' | 'not_held' | 'timed_out';

export type Signal =
  | {
      signal_id: string;
      type: 'followup';
      run_id: string;
      execution_id: string;
      message: string;
      mode: RunMode | null;
      attachments: string[];
    }
  | { signal_id: string; type: 'interrupt'; run_id: string; execution_id: string }
  | {
      signal_id: string;
      type: 'cancel';
      run_id: string;
      execution_id: string | null;
      cause: StopCause;
      reason: string;
    };

interface TeamQueue {
  /** Bumped each time a run of the team becomes QUEUED. */
  version: number;
  waiters: Set<() => void>;
}

/** Where a worker's signals are kept: its id within its team. */
const keyOf = (teamUid: string, workerId: string) => `${teamUid}\u0000${workerId}`;

/** A recorded run event, discriminated by its type. */
type Event = { [K in RunEvent['type']]: RecordedEvent<Extract<RunEvent, { type: K }>> }[RunEvent['type']];

export class WorkerRegistry {
  /** By run id. */
  private readonly holdings = new Map<string, Holding>();
  /** Pending signals by `keyOf(team, worker id)`, then by signal id; and when each worker's last one came. */
  private readonly signals = new Map<string, Map<string, Signal>>();
  private readonly lastSignalAt = new Map<string, number>();
  private readonly queues = new Map<string, TeamQueue>();

  constructor(
    readonly timings: { heartbeatSeconds: number; leaseSeconds: number },
    /** Records a worker seen (its presence, presence.ts). */
    private readonly seen: (teamUid: string, workerId: string) => void = () => {},
  ) {}

  /** Any request of a worker is a sign of life. */
  touch(teamUid: string, workerId: string): void {
    this.seen(teamUid, workerId);
  }

  /**
   * Forgets the pending signals of workers that hold nothing here and were last signalled longer
   * ago than a live worker takes to hear them: a worker that comes back later running one of
   * those runs is told it does not hold it (`not_held`) instead.
   */
  forgetSignals(now = Date.now()): void {
    const holders = new Set([...this.holdings.values()].map((h) => keyOf(h.team_uid, h.worker_id)));
    const after = 2 * MISSED_HEARTBEATS * this.timings.heartbeatSeconds * 1000;
    for (const [key, at] of this.lastSignalAt) {
      if (!holders.has(key) && now - at > after) {
        this.signals.delete(key);
        this.lastSignalAt.delete(key);
      }
    }
  }

  // ---- holdings ----------------------------------------------------------------------------

  allHoldings(): Holding[] {
    return [...this.holdings.values()];
  }

  heldBy(teamUid: string, workerId: string): Holding[] {
    return this.allHoldings().filter((h) => h.worker_id === workerId && h.team_uid === teamUid);
  }

  /** Records a holding at once (the claim route knows before the subscription does). */
  hold(holding: Holding): void {
    this.holdings.set(holding.run_id, holding);
  }

  /** The holding of the run that `e` is about, if `e` was recorded after it began. */
  private current(runId: string, e: Pick<RecordedEvent, 'position'>): Holding | null {
    const h = this.holdings.get(runId);
    return h && comparePositions(e.position, h.since) > 0 ? h : null;
  }

  /** Sets a holding straight from the write side's view of the run (after a no-op command). */
  sync(runId: string, view: { state: string; held: { worker_id: string; execution_id: string } | null }): void {
    const h = this.holdings.get(runId);
    if (!h) return;
    if (view.held?.worker_id !== h.worker_id || view.held.execution_id !== h.execution_id) {
      this.holdings.delete(runId);
    } else if (view.state === 'CLAIMED' || view.state === 'INPROGRESS') {
      Object.assign(h, { state: view.state, lease_expires_ms: null });
    }
  }

  /** The run leaves its worker: its pending signals go, and a stop signal when `stop` is given. */
  private release(e: Event, runId: string, stop?: { cause: StopCause; reason: string }): Holding | null {
    const h = this.current(runId, e);
    if (!h) return null;
    this.holdings.delete(runId);
    const pending = this.signals.get(keyOf(h.team_uid, h.worker_id));
    for (const [id, s] of pending ?? []) if (s.run_id === runId) pending!.delete(id);
    if (stop)
      this.queueSignal(h, {
        signal_id: e.id,
        type: 'cancel',
        run_id: runId,
        execution_id: h.execution_id,
        ...stop,
      });
    return h;
  }

  // ---- signals -----------------------------------------------------------------------------

  private queueSignal(to: Holding, signal: Signal): void {
    const key = keyOf(to.team_uid, to.worker_id);
    const pending = this.signals.get(key) ?? new Map<string, Signal>();
    pending.set(signal.signal_id, signal);
    this.signals.set(key, pending);
    this.lastSignalAt.set(key, Date.now());
  }

  /** Queues a signal for the execution that holds the run now; any other execution gets none. */
  private signalHolder(signal: Signal & { execution_id: string }): void {
    const h = this.holdings.get(signal.run_id);
    if (h?.execution_id === signal.execution_id) this.queueSignal(h, signal);
  }

  /** Whether this worker holds every run of `runs` as far as this process knows. */
  holdsAll(teamUid: string, workerId: string, runs: readonly string[]): boolean {
    return runs.every((id) => {
      const h = this.holdings.get(id);
      return h?.worker_id === workerId && h.team_uid === teamUid;
    });
  }

  /**
   * What a worker that runs `runs` must hear, after dropping the signals it acknowledged (here or
   * through another process). Stop signals of runs it no longer runs are dropped; a run it runs
   * without holding it (say the run was cancelled while the server restarted) gets a `not_held`
   * stop. Also answers the run of each signal this process had pending for the worker, the
   * acknowledged ones included, for the acknowledgements to be kept as long as they matter.
   */
  signalsFor(
    teamUid: string,
    workerId: string,
    runs: readonly string[],
    acknowledged: ReadonlySet<string>,
  ): { signals: Signal[]; runOf: Map<string, string> } {
    const key = keyOf(teamUid, workerId);
    const pending = this.signals.get(key) ?? new Map<string, Signal>();
    const runOf = new Map([...pending.values()].map((s) => [s.signal_id, s.run_id]));
    for (const id of acknowledged) pending.delete(id);
    for (const [id, s] of pending) {
      if (s.type === 'cancel' && !runs.includes(s.run_id)) pending.delete(id);
    }
    const signalled = new Set([...pending.values()].map((s) => s.run_id));
    for (const run_id of runs) {
      const h = this.holdings.get(run_id);
      if ((h?.worker_id === workerId && h.team_uid === teamUid) || signalled.has(run_id)) continue;
      const signal_id = `not-held:${run_id}`;
      runOf.set(signal_id, run_id);
      if (!acknowledged.has(signal_id)) {
        pending.set(signal_id, {
          signal_id,
          type: 'cancel',
          run_id,
          execution_id: null,
          cause: 'not_held',
          reason: 'this worker does not hold the run',
        });
      }
    }
    if (pending.size) this.signals.set(key, pending);
    else this.signals.delete(key);
    return { signals: [...pending.values()], runOf };
  }

  // ---- waiting for queued runs ---------------------------------------------------------------

  private queue(teamUid: string): TeamQueue {
    let q = this.queues.get(teamUid);
    if (!q) this.queues.set(teamUid, (q = { version: 0, waiters: new Set() }));
    return q;
  }

  /** Read before looking for queued runs, then passed to `waitForQueued`, so no wake-up is missed. */
  queuedVersion(teamUid: string): number {
    return this.queue(teamUid).version;
  }

  /** Resolves when a run of the team becomes QUEUED after `version`, after `ms`, or on abort. */
  waitForQueued(teamUid: string, version: number, ms: number, signal?: AbortSignal): Promise<void> {
    const q = this.queue(teamUid);
    if (q.version !== version || ms <= 0 || signal?.aborted || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        q.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      q.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  wakeTeam(teamUid: string): void {
    const q = this.queue(teamUid);
    q.version += 1;
    for (const wake of [...q.waiters]) wake();
  }

  /** Set when the server shuts down: claims stop handing out runs. */
  closed = false;

  /** Shutting down: every waiting claim answers at once, and no new one waits. */
  close(): void {
    this.closed = true;
    for (const teamUid of this.queues.keys()) this.wakeTeam(teamUid);
  }

  // ---- folding run events --------------------------------------------------------------------

  /**
   * Applies run events to holdings and signals. Returns the runs that became QUEUED (or approved,
   * or that freed a place under a concurrency limit by ending), with their team when known here,
   * for the caller to wake the team once the read models show them.
   */
  apply(events: readonly RecordedEvent[]): Array<{ run_id: string; team_uid: string | null }> {
    const queued: Array<{ run_id: string; team_uid: string | null }> = [];
    for (const e of events as readonly Event[]) {
      switch (e.type) {
        case 'RunCreated':
          queued.push({ run_id: e.data.run_id, team_uid: e.data.executing_team_uid });
          break;
        case 'RunResumed':
          this.release(e, e.data.run_id);
          queued.push({ run_id: e.data.run_id, team_uid: null });
          break;
        case 'RunLeased': {
          const { run_id, worker_id, execution_id, lease_expires_at } = e.data;
          const known = this.holdings.get(run_id);
          if (known && comparePositions(known.since, e.position) >= 0) break;
          // The lease was taken by a request of the worker's own team.
          const team_uid = e.metadata.team_uid ?? '';
          this.hold({
            run_id,
            worker_id,
            execution_id,
            team_uid,
            state: 'PENDING',
            lease_expires_ms: Date.parse(lease_expires_at),
            since: e.position,
          });
          break;
        }
        case 'RunClaimed':
        case 'RunStarted': {
          const h = this.current(e.data.run_id, e);
          if (h?.execution_id === e.data.execution_id) {
            h.state = e.type === 'RunClaimed' ? 'CLAIMED' : 'INPROGRESS';
            h.lease_expires_ms = null;
          }
          break;
        }
        case 'RunLeaseExpired': {
          const h = this.release(e, e.data.run_id, {
            cause: 'lease_expired',
            reason: 'the lease ran out before the run was acknowledged',
          });
          queued.push({ run_id: e.data.run_id, team_uid: h?.team_uid ?? null });
          break;
        }
        case 'RunWorkerLost': {
          const h = this.release(e, e.data.run_id, { cause: 'worker_lost', reason: 'the worker stopped heartbeating' });
          if (e.data.requeued) queued.push({ run_id: e.data.run_id, team_uid: h?.team_uid ?? null });
          break;
        }
        case 'RunFinished':
        case 'RunCancelled': {
          const stop = e.type === 'RunCancelled' ? { cause: 'cancelled' as const, reason: e.data.reason } : undefined;
          const h = this.release(e, e.data.run_id, stop);
          // A run that ends frees its place under a concurrency limit: a claim waiting may take the next.
          if (h) queued.push({ run_id: e.data.run_id, team_uid: h.team_uid });
          break;
        }
        case 'RunTimedOut':
          this.release(e, e.data.run_id, {
            cause: 'timed_out',
            reason: e.data.rule === 'stuck' ? 'the run made no progress for too long' : 'the run ran too long',
          });
          break;
        case 'RunApproved':
          queued.push({ run_id: e.data.run_id, team_uid: null });
          break;
        case 'RunFollowupDelivered': {
          const { run_id, execution_id, message, mode, attachments, to } = e.data;
          if (to === 'execution')
            this.signalHolder({ signal_id: e.id, type: 'followup', run_id, execution_id, message, mode, attachments });
          break;
        }
        case 'RunInterruptRequested':
          this.signalHolder({
            signal_id: e.id,
            type: 'interrupt',
            run_id: e.data.run_id,
            execution_id: e.data.execution_id,
          });
          break;
      }
    }
    return queued;
  }
}
