/**
 * How far each read model and reactor is behind the head of the log, read from their checkpoints
 * in the store when Prometheus scrapes (so any process of the store reports the owner's progress):
 * in events (positions; on EventStoreDB, log bytes) and in seconds (how long the oldest event not
 * yet passed has waited, by the server's clock), and the events each read model or reactor set aside.
 */
import type { Clock } from '../clock.js';
import { comparePositions, type EventStore, type Position, START } from '../eventstore/port.js';
import type { DocumentStore } from '../readstore/port.js';
import type { Metrics } from './registry.js';

export interface Followers {
  /** Read model name → its checkpoint's name. */
  projections: ReadonlyMap<string, string>;
  /** Reactor name → its checkpoint's name (grows as reactors start). */
  reactors: Map<string, string>;
}

interface Behind {
  events: number;
  seconds: number;
}

type Snapshot = {
  projections: Map<string, Behind & { setAside: number }>;
  reactors: Map<string, Behind & { setAside: number }>;
};

async function behind(events: EventStore, clock: Clock, head: Position, at: Position | null): Promise<Behind> {
  const checkpoint = at ?? START;
  if (comparePositions(checkpoint, head) >= 0) return { events: 0, seconds: 0 };
  const [oldest] = await events.readAll(checkpoint, 1);
  const waited = oldest ? (clock.now().getTime() - Date.parse(oldest.metadata.occurred_at)) / 1000 : 0;
  // SQLite numbers events from 1: a read model at START is behind by the head's position.
  const passed = checkpoint.commit < 0n ? 0n : checkpoint.commit;
  return { events: Number(head.commit - passed), seconds: Math.max(0, waited) };
}

async function snapshot(
  events: EventStore,
  docs: DocumentStore,
  clock: Clock,
  followers: Followers,
): Promise<Snapshot> {
  const head = await events.headPosition();
  const setAside = await docs.countSetAside();
  const result: Snapshot = { projections: new Map(), reactors: new Map() };
  for (const [name, checkpoint] of followers.projections) {
    const lag = await behind(events, clock, head, await docs.readCheckpoint(checkpoint));
    result.projections.set(name, { ...lag, setAside: setAside.get(checkpoint) ?? 0 });
  }
  for (const [name, checkpoint] of followers.reactors) {
    const lag = await behind(events, clock, head, await docs.readCheckpoint(checkpoint));
    result.reactors.set(name, { ...lag, setAside: setAside.get(checkpoint) ?? 0 });
  }
  return result;
}

/** Registers the lag and set-aside gauges; their values are read once per scrape. */
export function measureLag(
  metrics: Metrics,
  events: EventStore,
  docs: DocumentStore,
  clock: Clock,
  followers: Followers,
) {
  let scraping: Promise<Snapshot> | null = null;
  // The gauges are collected together (prom-client asks them at once): one read of the store.
  const current = () => {
    scraping ??= snapshot(events, docs, clock, followers).finally(() => {
      scraping = null;
    });
    return scraping;
  };
  const gauge = (
    name: string,
    help: string,
    label: 'projection' | 'reactor',
    value: (s: Snapshot) => Map<string, number>,
  ) =>
    metrics.gauge({
      name,
      help,
      labelNames: [label],
      async collect() {
        this.reset();
        for (const [key, v] of value(await current())) this.set({ [label]: key }, v);
      },
    });
  const pick = <T>(m: Map<string, T>, f: (t: T) => number) => new Map([...m].map(([k, v]) => [k, f(v)]));
  gauge('shopfloor_projection_lag_events', 'Events of the log a read model has not applied yet', 'projection', (s) =>
    pick(s.projections, (b) => b.events),
  );
  gauge(
    'shopfloor_projection_lag_seconds',
    'How long the oldest event a read model has not applied has waited',
    'projection',
    (s) => pick(s.projections, (b) => b.seconds),
  );
  gauge(
    'shopfloor_projection_set_aside_events',
    'Events a read model set aside because it cannot apply them',
    'projection',
    (s) => pick(s.projections, (b) => b.setAside),
  );
  gauge('shopfloor_reactor_lag_events', 'Events of the log a reactor has not passed yet', 'reactor', (s) =>
    pick(s.reactors, (b) => b.events),
  );
  gauge(
    'shopfloor_reactor_lag_seconds',
    'How long the oldest event a reactor has not passed has waited',
    'reactor',
    (s) => pick(s.reactors, (b) => b.seconds),
  );
  gauge(
    'shopfloor_reactor_set_aside_events',
    'Events a reactor set aside after its reaction failed every try',
    'reactor',
    (s) => pick(s.reactors, (b) => b.setAside),
  );
}
