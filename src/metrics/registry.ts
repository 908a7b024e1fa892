/**
 * The process's Prometheus metrics (prom-client), one registry per runtime so that several servers
 * in one process (tests) keep theirs apart. Labels are names the code chooses (route templates,
 * read model names, outcomes), never a tenant's id or a user's input: docs/operations.md, Metrics.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Buckets of request and append latency, in seconds: 1 ms to 10 s. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Labels<L extends string> = { name: string; help: string; labelNames?: readonly L[] };
type Collect = (this: Gauge) => void | Promise<void>;

interface CustomMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values(): Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>;
}

export interface Metrics {
  registry: Registry;
  /** The counter named `name`, made on first use (a feature's metrics are declared where counted). */
  counter<L extends string>(spec: Labels<L>): Counter<L>;
  /** A gauge whose value `collect` sets when Prometheus scrapes. */
  gauge<L extends string>(spec: Labels<L> & { collect?: Collect }): Gauge<L>;
  histogram<L extends string>(spec: Labels<L>): Histogram<L>;
  /** A metric whose samples `values` computes at each scrape, from tallies kept elsewhere (http.ts). */
  custom(spec: CustomMetric): void;
  appends: { events: Counter<'outcome'>; seconds: Histogram<'outcome'> };
  loadShed: Counter<never>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'shopfloor_' });
  const made = <M>(name: string, make: () => M): M => (registry.getSingleMetric(name) as M | undefined) ?? make();
  const metrics: Metrics = {
    registry,
    counter: (spec) =>
      made(spec.name, () => new Counter({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] })),
    gauge: (spec) =>
      made(spec.name, () => new Gauge({ ...spec, labelNames: spec.labelNames ?? [], registers: [registry] })),
    histogram: (spec) =>
      made(
        spec.name,
        () =>
          new Histogram({
            ...spec,
            labelNames: spec.labelNames ?? [],
            buckets: LATENCY_BUCKETS,
            registers: [registry],
          }),
      ),
    custom: (spec) => {
      // What prom-client asks of a metric it exposes (Registry.registerMetric): `get()` in its shape.
      const metric = {
        name: spec.name,
        get: async () => ({ ...spec, values: spec.values(), aggregator: 'sum' as const }),
      };
      registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
    },
    appends: undefined as never,
    loadShed: undefined as never,
  };
  metrics.appends = {
    events: metrics.counter({
      name: 'shopfloor_events_appended_total',
      help: 'Events appended to the event store, by outcome (ok, conflict, error: the events of a refused append)',
      labelNames: ['outcome'],
    }),
    seconds: metrics.histogram({
      name: 'shopfloor_append_duration_seconds',
      help: 'Time an append takes to be acknowledged by the event store, by outcome',
      labelNames: ['outcome'],
    }),
  };
  metrics.loadShed = metrics.counter({
    name: 'shopfloor_load_shed_total',
    help: 'Requests refused with 503 because the server was overloaded (load shedding)',
  });
  return metrics;
}
