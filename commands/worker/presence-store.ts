/**
 * Workers' presence, kept in the read store so that every process of a store sees every worker:
 * who announced itself, when it was last seen, and the signals it acknowledged. Written only by
 * conditional updates of one document (DocumentStore.update, remove).
 */
import { findEach } from '../../src/readstore/paging.js';
import type { Runtime } from '../../src/runtime.js';
import { MISSED_HEARTBEATS } from './registry.js';

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

/** How many workers of the team are connected now (seen within their missed heartbeats), from any process. */
export const liveWorkerCount = (rt: Runtime, teamUid: string): Promise<number> => new Presences(rt).countLive(teamUid);

/** Acknowledgements kept at least this long, whatever their run, and never more than this many. */
const ACK_KEPT_MS = 10 * 60_000;
const MAX_ACKS = 1000;

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

  /** Workers of every team seen within the last missed heartbeats (the metrics: no team in sight). */
  countAllLive(now = Date.now()): Promise<number> {
    return this.docs.count({ seen_ms: { $gte: now - this.goneAfterMs } });
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
