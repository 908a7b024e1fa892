/**
 * A run tree as an OpenTelemetry trace, derived from its events (docs/features/run.md, "Runs as
 * traces"): each run a span from RunCreated to the event that ends it, under its parent run's span;
 * each execution a span from RunLeased to its end; each timeline entry a step from its event to the
 * next entry or the end of its execution; each tool call from the message that makes it (an
 * `action` block) to the one that answers it (its `action_result`). Times are the events' `occurred_at`. Usage and cost are attributes of the run's span.
 */
import type { RunCreatedData, RunEvent } from '../../commands/run/events.js';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { eventSpanIdOf, runSpanIdOf, traceIdOf } from '../../src/tracing/ids.js';

type Value = string | number | boolean;
export interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: { stringValue?: string; doubleValue?: number; boolValue?: boolean } }>;
  status: { code: number; message?: string };
}

/** OTLP span kinds and status codes. */
const INTERNAL = 1;
const [UNSET, OK, ERROR] = [0, 1, 2];

const nanos = (iso: string) => (BigInt(Date.parse(iso)) * 1_000_000n).toString();
const attribute = (key: string, v: Value) => ({
  key,
  value: typeof v === 'string' ? { stringValue: v } : typeof v === 'boolean' ? { boolValue: v } : { doubleValue: v },
});
const attributes = (record: Record<string, Value | null | undefined>) =>
  Object.entries(record)
    .filter((e): e is [string, Value] => e[1] !== null && e[1] !== undefined)
    .map(([k, v]) => attribute(k, v));

/** Numbers of `source` (one level deep) as attributes under `prefix`: usage and cost. */
export function numbersOf(prefix: string, source: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!source || typeof source !== 'object') return out;
  for (const [k, v] of Object.entries(source)) if (typeof v === 'number') out[`${prefix}.${k}`] = v;
  return out;
}

interface Open {
  spanId: string;
  name: string;
  start: string;
  parent: string;
  attrs: Record<string, Value | null>;
}

/** A recorded run event, discriminated by its type. */
type Event = { [K in RunEvent['type']]: RecordedEvent<Extract<RunEvent, { type: K }>> }[RunEvent['type']];

const statusOf = (state: string) =>
  state === 'SUCCEEDED' ? OK : ['FAILED', 'ERROR', 'BLOCKED'].includes(state) ? ERROR : UNSET;

/** Folds one run's events into spans: the open execution and step, closed as the log moves on. */
class RunTrace {
  readonly spans: Span[] = [];
  private execution: Open | null = null;
  private step: Open | null = null;
  /** Tool calls not answered yet, by action id. */
  private readonly tools = new Map<string, Open>();
  usage: Record<string, number> = {};
  state = 'QUEUED';
  ended: string | null = null;

  constructor(
    private readonly traceId: string,
    readonly run: RunCreatedData,
  ) {}

  close(o: Open, end: string, status = UNSET): void {
    this.spans.push({
      traceId: this.traceId,
      spanId: o.spanId,
      ...(o.parent ? { parentSpanId: o.parent } : {}),
      name: o.name,
      kind: INTERNAL,
      startTimeUnixNano: nanos(o.start),
      endTimeUnixNano: nanos(end < o.start ? o.start : end),
      attributes: attributes({ 'shopfloor.run.id': this.run.run_id, ...o.attrs }),
      status: { code: status },
    });
  }

  private endStep(at: string): void {
    if (this.step) this.close(this.step, at);
    this.step = null;
  }

  endExecution(at: string, status = UNSET): void {
    this.endStep(at);
    for (const open of this.tools.values()) this.close(open, at);
    this.tools.clear();
    if (this.execution) this.close(this.execution, at, status);
    this.execution = null;
  }

  /** A timeline entry opens a step that lasts until the next entry or the end of its execution. */
  private startStep(e: Extract<Event, { type: 'RunTimelineRecorded' }>, at: string): void {
    this.endStep(at);
    const parent = this.execution?.spanId ?? runSpanIdOf(this.run.run_id);
    this.step = { spanId: eventSpanIdOf(e.id), name: e.data.name.slice(0, 120), start: at, parent, attrs: {} };
  }

  /** A message's `action` blocks open tool calls; its `action_result` blocks close them. */
  private toolCalls(e: Extract<Event, { type: 'RunMessageRecorded' }>, at: string): void {
    for (const block of e.data.content as ContentBlock[]) {
      if (block.type === 'action' && !this.tools.has(block.id)) {
        const attrs = {
          'gen_ai.tool.name': block.name,
          'gen_ai.tool.call.id': block.id,
          'shopfloor.tool.category': block.category,
        };
        const parent = this.execution?.spanId ?? runSpanIdOf(this.run.run_id);
        this.tools.set(block.id, {
          spanId: eventSpanIdOf(`${e.id}:${block.id}`),
          name: `tool ${block.name}`,
          start: at,
          parent,
          attrs,
        });
      } else if (block.type === 'action_result') {
        const open = this.tools.get(block.action_id);
        if (!open) continue;
        this.tools.delete(block.action_id);
        open.attrs['shopfloor.tool.state'] = block.state;
        this.close(open, at, block.state === 'completed' ? OK : block.state === 'running' ? UNSET : ERROR);
      }
    }
  }

  apply(e: Event): void {
    const at = e.metadata.occurred_at;
    if (e.type === 'RunLeased') {
      this.endExecution(at);
      const attrs = { 'shopfloor.execution.id': e.data.execution_id, 'shopfloor.worker.id': e.data.worker_id };
      this.execution = {
        spanId: eventSpanIdOf(e.id),
        name: 'execution',
        start: at,
        parent: runSpanIdOf(e.data.run_id),
        attrs,
      };
    } else if (e.type === 'RunTimelineRecorded') this.startStep(e, at);
    else if (e.type === 'RunMessageRecorded') this.toolCalls(e, at);
    else if (e.type === 'RunUsageReported') this.usage = numbersOf('shopfloor.usage', e.data.usage);
    else if (e.type === 'RunLeaseExpired') this.endExecution(at, ERROR);
    else if (e.type === 'RunResumed') this.ended = null;
    else if (e.type === 'RunFinished' || e.type === 'RunCancelled' || e.type === 'RunWorkerLost') {
      const requeued = e.type === 'RunWorkerLost' && e.data.requeued;
      this.state = e.type === 'RunFinished' ? e.data.state : e.type === 'RunCancelled' ? 'CANCELLED' : 'ERROR';
      if (requeued) this.state = 'QUEUED';
      this.ended = requeued ? null : at;
      this.endExecution(at, requeued ? ERROR : statusOf(this.state));
    }
  }
}

/** The spans of one run's stream; `extra` adds attributes to the run's span (cost from the ledger). */
export function runSpans(
  events: readonly RecordedEvent[],
  rootRunId: string,
  extra: Record<string, Value> = {},
): Span[] {
  const [created, ...rest] = events as readonly Event[];
  if (created?.type !== 'RunCreated') return [];
  const run = created.data;
  const trace = new RunTrace(traceIdOf(rootRunId), run);
  for (const e of rest) trace.apply(e);
  const end = trace.ended ?? rest.at(-1)?.metadata.occurred_at ?? created.metadata.occurred_at;
  trace.endExecution(end);
  const runAttributes = {
    'shopfloor.run.state': trace.state,
    'shopfloor.run.open': trace.ended === null,
    'shopfloor.run.root_id': run.root_run_id,
    'shopfloor.run.parent_id': run.parent_run_id,
    'shopfloor.factory.uid': run.factory_uid,
    'shopfloor.team.uid': run.team_uid,
    'shopfloor.run.source': run.source,
    'shopfloor.agent.uid': run.agent_identity_uid,
    'gen_ai.request.model': run.resolved?.model_id ?? null,
    ...trace.usage,
    ...extra,
  };
  const parent = run.parent_run_id ? runSpanIdOf(run.parent_run_id) : '';
  const name = `run ${run.title}`.slice(0, 120);
  trace.close(
    { spanId: runSpanIdOf(run.run_id), name, start: created.metadata.occurred_at, parent, attrs: runAttributes },
    end,
    statusOf(trace.state),
  );
  return trace.spans;
}

/** The blocks of a message that trace tool calls (commands/worker/schema.ts has them all). */
type ContentBlock =
  | { type: 'action'; id: string; name: string; category: string }
  | { type: 'action_result'; action_id: string; state: string }
  | { type: 'text' | 'event' };

/** OTLP/JSON of the spans (the body an OTLP/HTTP receiver takes at /v1/traces). */
export const otlpJson = (spans: Span[]) => ({
  resourceSpans: [
    {
      resource: { attributes: attributes({ 'service.name': 'shopfloor' }) },
      scopeSpans: [{ scope: { name: 'shopfloor.runs', version: '1' }, spans }],
    },
  ],
});
