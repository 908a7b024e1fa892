/**
 * The live projector: one subscription to the event log feeds every projection. The writes of
 * every projection for a batch are committed with their checkpoints as one (one transaction on
 * SQLite), so a restart resumes exactly where the last commit left off. `waitFor(position)` lets
 * a command answer only once its own events are visible to queries (read your writes).
 *
 * Of the processes on one store, one owns the projector at a time (the `projector` lease, see
 * ownership.ts) and projects, its commits fenced by the lease; the others follow the checkpoints
 * it commits, so their `waitFor` resolves once the owner has passed a position. A process that
 * loses the lease stops projecting at once and follows; when the owner dies, another takes over
 * from the checkpoints.
 *
 * An event a read model cannot apply is set aside for that read model (projector/isolate): it is
 * logged once, recorded beside the checkpoint, and the projector goes on, so one bad event never
 * holds up the others, nor takes the process out of service: `/readyz` stays ready and names it,
 * as `shopfloor projections status` does, until a rebuild of that read model applies it
 * (`shopfloor projections retry`).
 */
import type { Logger } from 'pino';
import {
  comparePositions,
  START,
  type EventMetadata,
  type EventStore,
  type Position,
  type RecordedEvent,
} from '../eventstore/port.js';
import { setTimeout as delay } from 'node:timers/promises';
import { CheckpointMoved, type DocumentStore, type Fence, FenceLost, type SetAsideEvent } from '../readstore/port.js';
import { commitIsolated, type Target } from './isolate.js';
import { replayInto } from './rebuild.js';
import { type AnyProjection, collectionOf, collectionsOf } from './projection.js';
import type { Exclusive, Ownership } from './ownership.js';
import { Waiters } from './waiters.js';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import type { Tracing } from '../tracing/tracing.js';

/** Catching up, large batches fold many changes of one document into one write. */
const BATCH_SIZE = 5000;
const RETRY_AFTER_FAILURE_MS = 1000;
/** A follower reads the owner's checkpoints this often while commands wait on them, else seldom. */
const FOLLOW_WAITING_MS = 5;
const FOLLOW_IDLE_MS = 250;
/** The lease of the projector among the processes of one store. */
const LEASE = 'projector';

/** A read model with events set aside, named by `/readyz`. */
export interface SetAsideCount {
  projection: string;
  version: number;
  events: number;
}

const minPosition = (positions: Position[]): Position =>
  positions.reduce((min, p) => (comparePositions(p, min) < 0 ? p : min), positions[0] ?? START);

export class Projector {
  private readonly targets: Target[];
  private readonly changeCounts = new Map<AnyProjection, number>();
  private readonly changeListeners = new Set<(p: AnyProjection) => void>();
  private readonly passedListeners = new Set<(position: Position) => void>();
  private processed: Position = START;
  private readonly waiters = new Waiters();
  private readonly abort = new AbortController();
  private loop: Promise<void> | null = null;
  private readyAt: Position | null = null;
  private ready = false;
  private failing = false;
  private lease: Exclusive | null = null;
  private projecting = false;
  private following: Promise<void> | null = null;
  /** Wakes a follower's wait for the next look at the checkpoints (a command began waiting). */
  private poke: (() => void) | null = null;

  /** Without `ownership`, this process projects alone (tools, unit tests). */
  constructor(
    private readonly events: EventStore,
    private readonly docs: DocumentStore,
    readonly projections: readonly AnyProjection[],
    private readonly log: Logger,
    private readonly ownership?: Ownership,
    private readonly tracing?: Tracing,
  ) {
    this.targets = projections.map((p) => ({
      projection: p,
      collection: collectionOf(p),
      position: START,
      guarded: true,
    }));
  }

  async start(): Promise<void> {
    for (const t of this.targets) {
      for (const { name, indexes } of collectionsOf(t.projection, t.collection))
        await this.docs.ensureCollection(name, indexes);
    }
    await this.readPositions();
    this.readyAt = await this.events.headPosition();
    this.settle();
    const setAside = await this.setAside();
    // Said once at start as well as when it happens: an operator reading a restart's log sees it.
    if (setAside.length)
      this.log.warn(
        { set_aside: setAside },
        'read models hold events set aside; `shopfloor projections retry` applies them',
      );
    if (!this.ownership) {
      this.projecting = true;
      this.loop = this.run(this.abort.signal);
      return;
    }
    this.following = this.follow();
    this.lease = this.ownership.exclusive(LEASE, ({ signal, fence }) => this.own(signal, fence));
    await this.lease.started;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.poke?.();
    await this.lease?.stop();
    await this.loop;
    await this.following;
  }

  /** True while this process projects (it owns the projector); the others follow its checkpoints. */
  get isOwner(): boolean {
    return this.projecting;
  }

  private async readPositions(): Promise<void> {
    for (const t of this.targets) t.position = (await this.docs.readCheckpoint(t.collection)) ?? START;
    this.processed = minPosition(this.targets.map((t) => t.position));
  }

  /** Projects while this process owns the lease, from the checkpoints the last owner committed. */
  private async own(signal: AbortSignal, fence: Fence): Promise<void> {
    const stop = AbortSignal.any([signal, this.abort.signal]);
    await this.readPositions();
    this.projecting = true;
    this.settle();
    try {
      this.loop = this.run(stop, fence);
      await this.loop;
    } finally {
      this.projecting = false;
      this.poke?.();
    }
  }

  /**
   * While another process projects: reads the checkpoints it commits, so waiters here are
   * answered once it has passed their positions (with the events it set aside, for theirs).
   */
  private async follow(): Promise<void> {
    while (!this.abort.signal.aborted) {
      if (!this.projecting) {
        try {
          await this.observe();
          this.failing = false;
        } catch (error) {
          if (!this.failing) this.log.error({ err: error }, 'cannot read the read models; trying again');
          this.failing = true;
        }
      }
      const ms = this.waiters.pending && !this.projecting ? FOLLOW_WAITING_MS : FOLLOW_IDLE_MS;
      const poked = new Promise<void>((resolve) => (this.poke = resolve));
      await Promise.race([delay(ms), poked]);
      this.poke = null;
    }
  }

  private async observe(): Promise<void> {
    const stored = new Map((await this.docs.listCheckpoints()).map((c) => [c.name, c.position]));
    const moved = this.targets.filter((t) => {
      const at = stored.get(t.collection) ?? START;
      if (comparePositions(at, t.position) === 0) return false;
      t.position = at;
      return true;
    });
    if (!moved.length) return;
    // Read after the checkpoints: the events set aside up to them are there too.
    const counts = await this.docs.countSetAside();
    for (const t of this.targets) {
      const known = this.waiters.setAsideBy(t.projection.name);
      if ((counts.get(t.collection) ?? 0) <= known.length) continue;
      const ids = new Set(known.map((e) => e.event_id));
      for (const e of await this.docs.listSetAside(t.collection))
        if (!ids.has(e.event_id)) this.waiters.remember({ ...e, readModel: t.projection.name });
    }
    for (const t of moved) this.changed(t.projection);
    this.processed = minPosition(this.targets.map((t) => t.position));
    this.settle();
  }

  /** True once the projections have caught up with the log as it was at start-up. */
  get isReady(): boolean {
    return this.ready;
  }

  /** True while the last attempt to apply a batch failed for a reason of the store's (it retries). */
  get isFailing(): boolean {
    return this.failing;
  }

  /**
   * Resolves when every projection has processed the event at `position`. With `origin` (the
   * metadata of a command's own events, up to `position`), rejects at once with ReadModelFailed
   * when a read model set one of them aside: waiting longer would not show it.
   */
  waitFor(position: Position | null, origin?: EventMetadata): Promise<void> {
    if (!position) return Promise.resolve();
    if (comparePositions(this.processed, position) >= 0) return this.waiters.passed(position, origin);
    this.poke?.();
    return this.waiters.wait(position, origin);
  }

  /** The read models with events set aside, read from the store (a retry elsewhere clears them). */
  async setAside(): Promise<SetAsideCount[]> {
    const counts = await this.docs.countSetAside();
    return this.projections
      .filter((p) => counts.has(collectionOf(p)))
      .map((p) => ({ projection: p.name, version: p.version, events: counts.get(collectionOf(p))! }));
  }

  /** A batch applied, in a span of its own while tracing is on. */
  private tracedBatch(batch: RecordedEvent[], fence?: Fence): Promise<void> {
    if (!this.tracing?.enabled) return this.applyBatch(batch, fence);
    const attributes = {
      'shopfloor.events': batch.length,
      'shopfloor.position.first': String(batch[0]?.position.commit),
      'shopfloor.position.last': String(batch.at(-1)?.position.commit),
    };
    return this.tracing.inSpan('projector batch', attributes, () => this.applyBatch(batch, fence), ROOT_CONTEXT);
  }

  private async run(signal: AbortSignal, fence?: Fence): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.loadFresh(fence);
        for await (const batch of this.events.subscribe(this.processed, signal, BATCH_SIZE)) {
          await this.tracedBatch(batch, fence);
          this.failing = false;
          this.processed = batch[batch.length - 1]!.position;
          this.settle();
        }
      } catch (error) {
        if (error instanceof FenceLost) {
          this.log.warn('the projector lease was taken over; following the new owner');
          return;
        }
        if (signal.aborted) return;
        this.failing = true;
        this.log.error({ err: error }, 'projector failed; resuming from the last checkpoints');
        await new Promise((r) => setTimeout(r, RETRY_AFTER_FAILURE_MS));
      }
    }
  }

  /**
   * Read models that start from nothing (a new read store, or a new version) are loaded as a
   * rebuild loads them: only their event types, indexes built once loaded. Following the log
   * event by event with every index kept up to date takes about twice as long.
   */
  private async loadFresh(fence?: Fence): Promise<void> {
    const fresh = this.targets.filter((t) => t.position === START);
    if (fresh.length === 0) return;
    const head = await this.events.headPosition();
    if (comparePositions(head, START) === 0) return;
    this.log.info({ read_models: fresh.map((t) => t.projection.name) }, 'loading new read models from the log');
    const projections = fresh.map((t) => t.projection);
    await replayInto(
      this.events,
      this.docs,
      projections,
      fresh.map((t) => t.collection),
      head,
      () => {},
      (t, e) => this.noteSetAside(t.projection, e),
      fence,
    );
    for (const t of fresh) {
      t.position = head;
      this.changed(t.projection);
    }
    this.failing = false;
    this.processed = minPosition(this.targets.map((t) => t.position));
    this.settle();
  }

  private async applyBatch(batch: RecordedEvent[], fence?: Fence): Promise<void> {
    for (;;) {
      try {
        await commitIsolated(
          this.docs,
          this.targets,
          batch,
          (target, wrote, setAside) => {
            if (wrote || setAside.length) this.changed(target.projection);
            for (const e of setAside) this.noteSetAside(target.projection, e);
          },
          fence,
        );
        return;
      } catch (error) {
        if (!(error instanceof CheckpointMoved)) throw error;
        // A rebuild swapped in a new collection: continue from its checkpoint, on its documents.
        // (On MongoDB the parts before it are committed already; their checkpoints, now moved too,
        // are re-read the same way on the next round.)
        const moved = this.targets.find((t) => t.collection === error.checkpointName)!;
        moved.position = (await this.docs.readCheckpoint(error.checkpointName)) ?? START;
        this.changed(moved.projection);
      }
    }
  }

  /** One error line per event set aside; a command waiting for it is answered now, not when all is done. */
  private noteSetAside(p: AnyProjection, e: SetAsideEvent): void {
    this.log.error(
      {
        read_model: p.name,
        stream: e.stream,
        position: e.position.commit.toString(),
        event_id: e.event_id,
        event_type: e.event_type,
        error: e.error,
      },
      'read model set aside an event it cannot apply; it goes on without it',
    );
    this.waiters.remember({ ...e, readModel: p.name });
  }

  private changed(p: AnyProjection): void {
    this.changeCounts.set(p, (this.changeCounts.get(p) ?? 0) + 1);
    for (const listener of this.changeListeners) listener(p);
  }

  /**
   * Calls `listener` each time `changes(p)` grows, once the change is committed (here) or seen in
   * the checkpoints (a follower): for what must act on a change rather than notice it on next use.
   * Returns the unsubscribe.
   */
  onChange(listener: (p: AnyProjection) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Grows whenever this projector changes the read model: a cache of its documents compares it. */
  changes(p: AnyProjection): number {
    return this.changeCounts.get(p) ?? 0;
  }

  /** How far every read model has applied the log (here, or in the owner's checkpoints on a follower). */
  get position(): Position {
    return this.processed;
  }

  /**
   * Calls `listener` with `position` each time it moves: what follows the log as the read models
   * show it (event streams) acts then. Returns the unsubscribe.
   */
  onPassed(listener: (position: Position) => void): () => void {
    this.passedListeners.add(listener);
    return () => this.passedListeners.delete(listener);
  }

  private settle(): void {
    this.waiters.settle(this.processed);
    for (const listener of this.passedListeners) listener(this.processed);
    if (!this.ready && this.readyAt && comparePositions(this.processed, this.readyAt) >= 0) this.ready = true;
    // The owner drops what newer versions replaced, once caught up.
    if (this.ready && this.projecting && !this.dropped) {
      this.dropped = true;
      void this.dropOldVersions().catch((error: unknown) =>
        this.log.error({ err: error }, 'could not drop superseded read model versions'),
      );
    }
  }

  private dropped = false;

  /** Blue/green: once the current versions have caught up, older versions' collections go. */
  private async dropOldVersions(): Promise<void> {
    const current = new Set(this.projections.flatMap((p) => collectionsOf(p, collectionOf(p)).map((c) => c.name)));
    const names = new Set(this.projections.map((p) => p.name));
    for (const c of await this.docs.listCollections()) {
      // A version's own collection and its tables; never a rebuild's or a check's shadow.
      const m = /^(.+)_v\d+(?:__(?!rebuild$|verify$)[a-z][a-z0-9]*(?:_[a-z0-9]+)*)?$/.exec(c);
      if (m && names.has(m[1]!) && !current.has(c)) {
        this.log.info({ collection: c }, 'dropping superseded read model version');
        await this.docs.drop(c);
      }
    }
  }

  status(): Array<{ name: string; version: number; collection: string; position: Position }> {
    return this.targets.map((t) => ({
      name: t.projection.name,
      version: t.projection.version,
      collection: t.collection,
      position: t.position,
    }));
  }
}
