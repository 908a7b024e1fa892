/**
 * `shopfloor runs trace <run_id> [--otlp <endpoint>]`: the run's tree as a trace derived from the
 * log (trace.ts), printed as OTLP/JSON, or sent to an OTLP/HTTP receiver (a collector, Jaeger,
 * Tempo): `<endpoint>/v1/traces` unless the endpoint already names that path. An operator's tool on
 * the stores: it reads every run.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.js';
import type { EventStore } from '../../src/eventstore/port.js';
import type { CliCommand } from '../../src/feature.js';
import { collectionOf } from '../../src/projector/projection.js';
import type { DocumentStore } from '../../src/readstore/port.js';
import { withStores } from '../../src/runtime.js';
import { type RunDoc, runsProjection } from '../../commands/run/public.js';
import { runTrace } from './trace.js';

const USAGE = '  shopfloor runs trace <run_id> [--otlp <endpoint>]  a run tree as an OpenTelemetry trace, from the log';

/** Where OTLP/HTTP takes traces, given a collector's base URL or the full path. */
const tracesUrl = (endpoint: string): string =>
  /\/v1\/traces\/?$/.test(endpoint) ? endpoint : `${endpoint.replace(/\/$/, '')}/v1/traces`;

export async function traceRun(
  stores: { events: EventStore; docs: DocumentStore },
  argv: string[],
  out: (line: string) => void = console.log,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { otlp: { type: 'string' } },
  });
  const [action, runId] = positionals;
  if (action !== 'trace' || !runId || positionals.length > 2) {
    console.error(`usage:\n${USAGE}`);
    return 2;
  }
  const runs = stores.docs.collection<RunDoc>(collectionOf(runsProjection));
  const trace = await runTrace(stores.events, runs, runId, () => true);
  if (!trace) {
    console.error(`no run ${runId}`);
    return 1;
  }
  if (!values.otlp) {
    out(JSON.stringify(trace));
    return 0;
  }
  const url = tracesUrl(values.otlp);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(trace),
  });
  if (!res.ok) {
    console.error(`${url} answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
    return 1;
  }
  const spans = trace.resourceSpans[0]?.scopeSpans[0]?.spans.length ?? 0;
  out(`sent ${spans} span(s) of trace ${trace.resourceSpans[0]?.scopeSpans[0]?.spans[0]?.traceId ?? '-'} to ${url}`);
  return 0;
}

export const runsTraceCommand: CliCommand = {
  name: 'runs',
  usage: USAGE,
  run: (argv) => withStores(loadConfig(), (stores) => traceRun(stores, argv)),
};
