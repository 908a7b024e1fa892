/**
 * Opens the stores the configuration names and the projector over them. The embedded SQLite
 * adapters are the default; EVENTSTORE_URL and MONGODB_URL switch to the production servers.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config.js';
import { type EventStore, type NewEvent, type RecordedEvent, START } from './eventstore/port.js';
import { openSqliteEventStore } from './eventstore/sqlite.js';
import { type CommandContext, type Handled, handleCommand, metadataOf } from './kernel/handle.js';
import type { Decider } from './kernel/decider.js';
import { oneAtATime } from './kernel/per-key-queue.js';
import { foldedStreams, type StreamStates } from './kernel/stream-states.js';
import { type AnyProjection, collectionOf, type Projection, type Tables, tableOf } from './projector/projection.js';
import { Projector } from './projector/projector.js';
import type { Collection, Doc, DocumentStore } from './readstore/port.js';
import { openSqliteDocumentStore } from './readstore/sqlite.js';
import { type BlobStore, openBlobStore } from './blobs/store.js';
import { type UrlSigner, urlSigner } from './http/signed-url.js';
import { type AnyReactor, reactorCheckpoint } from './projector/reactor.js';
import { type ReactorProgress, runReactor } from './projector/reactor-run.js';
import { type ReactorStatus, reactorStatus } from './projector/reactor-status.js';
import { type Exclusive, Ownership, type Work } from './projector/ownership.js';
import { ownerOnlyDir, writeOwnerOnlyOnce } from './owner-only.js';
import { createMetrics, type Metrics } from './metrics/registry.js';
import { measuredAppends } from './metrics/appends.js';
import { measureLag } from './metrics/lag.js';
import { openTracing, type Tracing } from './tracing/tracing.js';
import { tracedCommand, tracedReactor } from './tracing/traced.js';

export interface Runtime {
  config: Config;
  /** The time of record (see clock.ts). */
  clock: Clock;
  log: Logger;
  events: EventStore;
  docs: DocumentStore;
  projector: Projector;
  blobs: BlobStore;
  urls: UrlSigner;
  /**
   * Handles a command and returns once the read models show its events; throws ReadModelFailed
   * at once when a read model set one of them aside. Commands on one stream are handled one at a
   * time in this process (see kernel/per-key-queue).
   */
  execute<C, E extends NewEvent, S>(
    stream: string,
    decider: Decider<C, E, S>,
    command: C,
    context: CommandContext,
  ): Promise<Handled<E, S>>;
  /**
   * Handles a command without waiting for the read models: for the first steps of a command that
   * spans streams, whose last step's `execute` waits for them all (its events come later).
   */
  handle<C, E extends NewEvent, S>(
    stream: string,
    decider: Decider<C, E, S>,
    command: C,
    context: CommandContext,
  ): Promise<Handled<E, S>>;
  /** The collection a projection keeps, typed by its documents. */
  readModel<D extends Doc>(projection: Projection<never, D>): Collection<D>;
  /** A table a projection keeps beside its read model (see projection.ts). */
  readTable<T extends Tables, K extends keyof T & string>(
    projection: Projection<never, Doc, T>,
    table: K,
  ): Collection<T[K]>;
  /** A stream's state now, folded by `decider` (kept between reads: only new events are read). */
  state: StreamStates;
  /**
   * Starts the reactors, each in the one process of the store that owns it at the time; each waits
   * for the read models to show an event before reacting.
   */
  startReactors(reactors: ReadonlyArray<AnyReactor<Runtime>>): void;
  /**
   * Where each started reactor stands: how far behind the head (events, seconds), whether this
   * process is catching it up, its set-aside events. For `/readyz` and the metrics.
   */
  reactors(): Promise<ReactorStatus[]>;
  /**
   * Runs `work` in one process of the store at a time: whenever this one holds lease `name`
   * (see projector/ownership). Stop it before the runtime closes.
   */
  exclusive(name: string, work: Work): Exclusive;
  /** The leases of this process (projector, reactors, exclusive work). */
  ownership: Ownership;
  /** The Prometheus metrics of this process (`/metrics`). */
  metrics: Metrics;
  /** OpenTelemetry tracing of this process (off unless OTEL_* name an exporter). */
  tracing: Tracing;

  close(): Promise<void>;
}

/** The URL signing secret: configured, or made once and kept in the data directory. */
function signingSecret(config: Config): string {
  if (config.URL_SIGNING_SECRET) return config.URL_SIGNING_SECRET;
  const file = path.join(config.DATA_DIR, 'url-signing.key');
  ownerOnlyDir(config.DATA_DIR);
  writeOwnerOnlyOnce(file, randomBytes(32).toString('base64url'));
  return fs.readFileSync(file, 'utf8').trim();
}

type Stores = { events: EventStore; docs: DocumentStore };

export async function openStores(config: Config): Promise<Stores> {
  ownerOnlyDir(config.DATA_DIR);
  const events = config.EVENTSTORE_URL
    ? (await import('./eventstore/esdb.js')).openEsdbEventStore(config.EVENTSTORE_URL, config.EVENTSTORE_STREAM_PREFIX)
    : openSqliteEventStore(path.join(config.DATA_DIR, 'events.db'));
  const docs = config.MONGODB_URL
    ? await (await import('./readstore/mongo.js')).openMongoDocumentStore(config.MONGODB_URL, config.MONGODB_DB)
    : openSqliteDocumentStore(path.join(config.DATA_DIR, 'read.db'));
  return { events, docs };
}

/** Runs `work` on the configured stores, closing them after (the CLI's commands on the stores). */
export async function withStores<T>(config: Config, work: (stores: Stores) => Promise<T>): Promise<T> {
  const stores = await openStores(config);
  try {
    return await work(stores);
  } finally {
    await stores.events.close();
    await stores.docs.close();
  }
}

export async function openRuntime(
  config: Config,
  log: Logger,
  projections: readonly AnyProjection[],
  clock: Clock = systemClock,
): Promise<Runtime> {
  const stores = await openStores(config);
  const metrics = createMetrics();
  const events = measuredAppends(stores.events, metrics);
  const docs = stores.docs;
  const followers = { projections: new Map(projections.map((p) => [p.name, collectionOf(p)])), reactors: new Map() };
  measureLag(metrics, events, docs, clock, followers);
  const tracing = openTracing(config);
  const ownership = new Ownership(docs, log, config.OWNERSHIP_LEASE_SECONDS * 1000);
  await ownership.start();
  const projector = new Projector(events, docs, projections, log, ownership, tracing);
  await projector.start();
  const reacting: Exclusive[] = [];
  const progress = new Map<string, ReactorProgress>();
  const folded = foldedStreams(events);
  const inTurn = oneAtATime();
  const handle: Runtime['handle'] = (stream, decider, command, context) =>
    inTurn(stream, () =>
      tracedCommand(tracing, stream, command, () => handleCommand(events, folded, stream, decider, command, context)),
    );
  const rt: Runtime = {
    config,
    clock,
    log,
    events,
    docs,
    projector,
    blobs: openBlobStore(path.join(config.DATA_DIR, 'blobs')),
    urls: urlSigner(signingSecret(config), config.publicBaseUrl),
    async execute(stream, decider, command, context) {
      const handled = await handle(stream, decider, command, context);
      // Every event of this command, on any stream, carries this metadata: should a read model
      // set one of them aside, the caller hears so at once.
      await projector.waitFor(handled.position, metadataOf(context));
      return handled;
    },
    handle,
    readModel: <D extends Doc>(p: Projection<never, D>) => docs.collection<D>(collectionOf(p)),
    readTable: <T extends Tables, K extends keyof T & string>(p: Projection<never, Doc, T>, table: K) =>
      docs.collection<T[K]>(tableOf(collectionOf(p), table)),
    state: async (folder, stream) => (await folded(folder, stream)).state,
    startReactors(reactors) {
      const settings = { attempts: config.REACTOR_ATTEMPTS, backoffMs: config.REACTOR_RETRY_SECONDS * 1000 };
      const before = (e: RecordedEvent) => projector.waitFor(e.position);
      for (const reactor of reactors) {
        followers.reactors.set(reactor.name, reactorCheckpoint(reactor));
        const p: ReactorProgress = { phase: 'waiting', position: START };
        progress.set(reactor.name, p);
        reacting.push(
          ownership.exclusive(reactorCheckpoint(reactor), ({ signal, fence }) =>
            runReactor({
              reactor: tracedReactor(reactor, tracing),
              deps: rt,
              events,
              docs,
              log,
              signal,
              before,
              fence,
              settings,
              progress: p,
            }),
          ),
        );
      }
    },
    reactors: () => reactorStatus(events, docs, progress, clock),
    exclusive: (name, work) => ownership.exclusive(name, work),
    ownership,
    metrics,
    tracing,
    async close() {
      // Reactors stop while the projector still answers their waits; every lease this process
      // held is released, for another process to take at once.
      await Promise.all(reacting.map((r) => r.stop()));
      await projector.stop();
      await ownership.stop();
      await events.close();
      await docs.close();
      await tracing.shutdown();
    },
  };
  return rt;
}
