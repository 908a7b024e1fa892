/**
 * GET /agent/runs/{run_id}/trace: the run's whole tree (from its root) as an OTLP/JSON trace,
 * derived from the event log (trace-spans.ts), for Jaeger, Tempo or Honeycomb after the fact.
 * Readable by whoever may read the run (the check GET /agent/runs/{run_id} makes); the runs of the
 * tree the caller may not read are left out. The CLI's `shopfloor runs trace` gives the same.
 */
import { z } from 'zod';
import { ledgerStream, type RunExecutionPriced, type RunInferencePriced } from '../../commands/analytics/events.js';
import { canView, type RunDoc, runParams, runsProjection, viewerOf } from '../../commands/run/public.js';
import { type RunCreatedData, runStream } from '../../commands/run/events.js';
import type { EventStore } from '../../src/eventstore/port.js';
import type { Api } from '../../src/http/api.js';
import { NotFound } from '../../src/kernel/errors.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Collection } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { numbersOf, otlpJson, runSpans, type Span } from './trace-spans.js';

/** The most runs one trace holds (a tree larger than this is cut, its oldest runs kept). */
const MAX_RUNS = 1000;

type Owner = Pick<RunCreatedData, 'team_uid' | 'executing_team_uid'> & { creator_uid: string };
const ownerOf = (run: RunCreatedData): Owner => ({ ...run, creator_uid: run.creator.uid });

/** The cost of each run of the tree, from its ledger: the latest priced inference and executions. */
async function costs(events: EventStore, rootRunId: string): Promise<Map<string, Record<string, number>>> {
  const byRun = new Map<string, Record<string, number>>();
  for (const e of (await events.readStream(ledgerStream(rootRunId))) as Array<{ type: string; data: unknown }>) {
    if (e.type !== 'RunInferencePriced' && e.type !== 'RunExecutionPriced') continue;
    const data = e.data as (RunInferencePriced | RunExecutionPriced)['data'];
    const prefix = e.type === 'RunInferencePriced' ? 'shopfloor.cost.inference' : 'shopfloor.cost.execution';
    byRun.set(data.run_id, { ...byRun.get(data.run_id), ...numbersOf(prefix, data.usage) });
  }
  return byRun;
}

/** The trace of the tree of `runId`, or null when there is no such run or `mayRead` refuses it. */
export async function runTrace(
  events: EventStore,
  runs: Collection<RunDoc>,
  runId: string,
  mayRead: (run: Owner) => boolean,
) {
  const [first] = await events.readStream(runStream(runId), { maxCount: 1 });
  if (first?.type !== 'RunCreated' || !mayRead(ownerOf(first.data as RunCreatedData))) return null;
  const root = (first.data as RunCreatedData).root_run_id;
  const tree = await findAll(runs, { filter: { root_run_id: root }, sort: [['created_at', 'asc']], limit: MAX_RUNS });
  const ids = new Set([root, runId, ...tree.map((r) => r.run_id)]);
  const cost = await costs(events, root);
  const spans: Span[] = [];
  for (const id of [...ids].slice(0, MAX_RUNS)) {
    const stream = await events.readStream(runStream(id));
    const created = stream[0]?.type === 'RunCreated' ? (stream[0].data as RunCreatedData) : null;
    if (created && mayRead(ownerOf(created))) spans.push(...runSpans(stream, root, cost.get(id)));
  }
  return otlpJson(spans);
}

const anyValue = z.object({
  stringValue: z.string().optional(),
  doubleValue: z.number().optional(),
  boolValue: z.boolean().optional(),
});
const keyValue = z.object({ key: z.string(), value: anyValue });
const span = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string(),
  kind: z.number(),
  startTimeUnixNano: z.string(),
  endTimeUnixNano: z.string(),
  attributes: z.array(keyValue),
  status: z.object({ code: z.number(), message: z.string().optional() }),
});
const otlpTrace = z.object({
  resourceSpans: z.array(
    z.object({
      resource: z.object({ attributes: z.array(keyValue) }),
      scopeSpans: z.array(
        z.object({ scope: z.object({ name: z.string(), version: z.string() }), spans: z.array(span) }),
      ),
    }),
  ),
});

export function runTraceRoutes(api: Api, rt: Runtime): void {
  const runs = rt.readModel(runsProjection);
  api.get(
    '/agent/runs/:run_id/trace',
    {
      schema: {
        params: runParams,
        response: { 200: otlpTrace },
        tags: ['runs'],
        summary: "The run's tree as an OpenTelemetry trace (OTLP/JSON), derived from the event log",
      },
    },
    async (req) => {
      const viewer = viewerOf(req.principal!);
      const trace = await runTrace(rt.events, runs, req.params.run_id, (run) => canView(run, viewer));
      if (!trace) throw new NotFound('run', req.params.run_id);
      return trace;
    },
  );
}
