/**
 * The live projector: one subscription to the event log feeds every projection. The writes of
 * every projection for a batch are committed with their checkpoints as one (one transaction on
 * SQLite), so a restart resumes exactly where the last commit left off. `waitFor(position)` lets
 * a command answer only once its own events are visible to queries (read your writes).
 */
import type { Logger } from 'pino';
import { comparePositions, START, type EventStore, type Position, type RecordedEvent } from '../eventstore/port.js';
import { CheckpointMoved, type CheckpointedWrites, type DocumentStore } from '../readstore/port.js';
import { DomainError } from '../kernel/errors.js';
import { applyEvents } from './batch.js';
import { replayInto } from './rebuild.js';
import { type AnyProjection, collectionOf } from './projection.js';

/** Catching up, large batches fold many changes of one document into one write. */
const BATCH_SIZE = 5000;
const RETRY_AFTER_FAILURE_MS = 1000;
const WAIT_FOR_TIMEOUT_MS = 10_000;

interface Waiter {
  position: Position;
  resolve(): void;
}

const minPosition = (positions: Position[]): Position =>
  positions.reduce((min, p) => (comparePositions(p, min) < 0 ? p : min), positions[0] ?? START);

export class Projector {
  private readonly checkpoints = new Map<AnyProjection, Position>();
  private readonly changeCounts = new Map<AnyProjection, number>();
  private processed: Position = START;
  private waiters: Waiter[] = [];
  private readonly abort = new AbortController();
  private loop: Promise<void> | null = null;
  private readyAt: Position | null = null;
  private ready = false;

  constructor(
    private readonly events: EventStore,
    private readonly docs: DocumentStore,
    readonly projections: readonly AnyProjection[],
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    for (const p of this.projections) {
      await this.docs.ensureCollection(collectionOf(p), p.indexes);
      this.checkpoints.set(p, (await this.docs.readCheckpoint(collectionOf(p))) ?? START);
    }
    this.processed = minPosition([...this.checkpoints.values()]);
    this.readyAt = await this.events.headPosition();
    this.settle();
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  /** True once the projections have caught up with the log as it was at start-up. */
  get isReady(): boolean {
    return this.ready;
  }

  /** Resolves when every projection has processed the event at `position`. */
  waitFor(position: Position | null): Promise<void> {
    if (!position || comparePositions(this.processed, position) >= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new DomainError(
              503,
              'resource_unavailable',
              'Read models lagging',
              'The read models did not catch up in time; the change was saved',
            ),
          ),
        WAIT_FOR_TIMEOUT_MS,
      );
      this.waiters.push({ position, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        await this.loadFresh();
        for await (const batch of this.events.subscribe(this.processed, signal, BATCH_SIZE)) {
          await this.applyBatch(batch);
          this.processed = batch[batch.length - 1]!.position;
          this.settle();
        }
      } catch (error) {
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
  private async loadFresh(): Promise<void> {
    const fresh = this.projections.filter((p) => this.checkpoints.get(p) === START);
    if (fresh.length === 0) return;
    const head = await this.events.headPosition();
    if (comparePositions(head, START) === 0) return;
    this.log.info({ read_models: fresh.map((p) => p.name) }, 'loading new read models from the log');
    await replayInto(this.events, this.docs, fresh, fresh.map(collectionOf), head, () => {});
    for (const p of fresh) {
      this.checkpoints.set(p, head);
      this.changed(p);
    }
    this.processed = minPosition([...this.checkpoints.values()]);
    this.settle();
  }

  private async applyBatch(batch: RecordedEvent[]): Promise<void> {
    for (;;) {
      const parts: Array<CheckpointedWrites & { projection: AnyProjection }> = [];
      for (const p of this.projections) {
        const checkpoint = this.checkpoints.get(p)!;
        const fresh = batch.filter((e) => comparePositions(e.position, checkpoint) > 0);
        if (fresh.length === 0) continue;
        const collection = collectionOf(p);
        const writes = await applyEvents(p, collection, this.docs.collection(collection), fresh);
        const position = fresh[fresh.length - 1]!.position;
        parts.push({
          projection: p,
          writes,
          checkpoint: collection,
          position,
          expected: checkpoint === START ? null : checkpoint,
        });
      }
      if (parts.length === 0) return;
      try {
        await this.docs.commitAll(parts);
        for (const { projection, position, writes } of parts) {
          this.checkpoints.set(projection, position);
          if (writes.length) this.changed(projection);
        }
        return;
      } catch (error) {
        if (!(error instanceof CheckpointMoved)) throw error;
        // A rebuild swapped in a new collection: continue from its checkpoint, on its documents.
        // (On MongoDB the parts before it are committed already; their checkpoints, now moved too,
        // are re-read the same way on the next round.)
        const moved = this.projections.find((p) => collectionOf(p) === error.checkpointName)!;
        this.checkpoints.set(moved, (await this.docs.readCheckpoint(error.checkpointName)) ?? START);
        this.changed(moved);
      }
    }
  }

  private changed(p: AnyProjection): void {
    this.changeCounts.set(p, (this.changeCounts.get(p) ?? 0) + 1);
  }

  /** Grows whenever this projector changes the read model: a cache of its documents compares it. */
  changes(p: AnyProjection): number {
    return this.changeCounts.get(p) ?? 0;
  }

  private settle(): void {
    const reached = this.waiters.filter((w) => comparePositions(this.processed, w.position) >= 0);
    if (reached.length) {
      this.waiters = this.waiters.filter((w) => !reached.includes(w));
      for (const w of reached) w.resolve();
    }
    if (!this.ready && this.readyAt && comparePositions(this.processed, this.readyAt) >= 0) {
      this.ready = true;
      void this.dropOldVersions();
    }
  }

  /** Blue/green: once the current versions have caught up, older versions' collections go. */
  private async dropOldVersions(): Promise<void> {
    const current = new Set(this.projections.map(collectionOf));
    const names = new Set(this.projections.map((p) => p.name));
    for (const c of await this.docs.listCollections()) {
      const m = /^(.+)_v\d+$/.exec(c);
      if (m && names.has(m[1]!) && !current.has(c)) {
        this.log.info({ collection: c }, 'dropping superseded read model version');
        await this.docs.drop(c);
      }
    }
  }

  status(): Array<{ name: string; version: number; collection: string; position: Position }> {
    return this.projections.map((p) => ({
      name: p.name,
      version: p.version,
      collection: collectionOf(p),
      position: this.checkpoints.get(p) ?? START,
    }));
  }
}
