/**
 * A run tree as an OpenTelemetry trace derived from the log (GET /agent/runs/{run_id}/trace), on a
 * clock the test moves: the runs, the execution, timeline steps and tool calls as spans with their
 * parents, times from the events, usage as attributes; readable by whoever may read the run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { runSpanIdOf, traceIdOf } from '../../../src/tracing/ids.js';
import { expectProblem, startTestApp, type TestApp } from '../../helpers/app.js';
import { outsiderKey } from '../../helpers/conversation-fixtures.js';
import { startReceiver } from '../../helpers/receiver.js';
import { traceRun } from '../../../queries/run/trace-cli.js';

const clock = manualClock('2026-06-01T10:00:00.000Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, clock);
});
afterAll(() => t.close());

type Span = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status: { code: number };
};
const at = (iso: string) => (BigInt(Date.parse(iso)) * 1_000_000n).toString();
const attr = (s: Span, key: string) => Object.values(s.attributes.find((a) => a.key === key)?.value ?? {})[0];

/** A root run with a child, the child executed by a worker that records steps, a tool call and usage. */
async function runTree() {
  const root = (await t.call('POST', '/agent/runs', { prompt: 'Plan it', title: 'Root' })).json().run_id as string;
  clock.advance(1000);
  const child = (await t.call('POST', '/agent/runs', { prompt: 'Do it', title: 'Child', parent_run_id: root })).json()
    .run_id as string;
  const agent = (await t.call('POST', '/agent/identities', { name: 'Runner' })).json().uid as string;
  const key = (await t.call('POST', `/agent/identities/${agent}/api-keys`)).json().api_key as string;
  const worker = (await t.call('POST', '/agent/workers', { host: 'b1' }, key)).json().worker_id as string;
  let claimed: { run_id: string; execution_id: string };
  do claimed = (await t.call('POST', `/agent/workers/${worker}/claim?wait_seconds=0`, undefined, key)).json().run;
  while (claimed.run_id !== child);
  const report = async (what: string, body?: unknown) => {
    clock.advance(1000);
    const res = await t.call('POST', `/agent/workers/${worker}/runs/${child}/${what}`, body, key, {
      'x-execution-id': claimed.execution_id,
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  await report('claim');
  await report('start');
  await report('timeline', { name: 'clone_repository' });
  await report('messages', {
    role: 'assistant',
    content: [{ type: 'action', id: 'call-1', category: 'command', name: 'bash', input: { cmd: 'ls' } }],
  });
  await report('messages', {
    role: 'tool',
    content: [
      { type: 'action_result', action_id: 'call-1', category: 'command', name: 'bash', state: 'completed', output: {} },
    ],
  });
  await report('usage', { total_tokens: 1234 });
  await report('finish', { state: 'SUCCEEDED' });
  return { root, child };
}

describe('GET /agent/runs/{run_id}/trace', () => {
  it('gives the whole tree as spans with parents, event times and usage', async () => {
    const started = clock.now().toISOString();
    const { root, child } = await runTree();
    const res = await t.call('GET', `/agent/runs/${child}/trace`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.resourceSpans[0].resource.attributes).toContainEqual({
      key: 'service.name',
      value: { stringValue: 'shopfloor' },
    });
    const spans = body.resourceSpans[0].scopeSpans[0].spans as Span[];
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceIdOf(root)]));
    // The root run was handed to the worker too (claims take the oldest run first): its own execution.
    const named = (name: string) =>
      spans.find((s) => s.name === name && attr(s, 'shopfloor.run.id') === (name === 'run Root' ? root : child))!;
    const [rootSpan, childSpan, execution, step, tool] = [
      'run Root',
      'run Child',
      'execution',
      'clone_repository',
      'tool bash',
    ].map(named);
    expect(rootSpan!.spanId).toBe(runSpanIdOf(root));
    expect(rootSpan!.parentSpanId).toBeUndefined();
    expect(childSpan!.parentSpanId).toBe(rootSpan!.spanId);
    expect(execution!.parentSpanId).toBe(childSpan!.spanId);
    expect(step!.parentSpanId).toBe(execution!.spanId);
    expect(tool!.parentSpanId).toBe(execution!.spanId);
    // Times are the events': the child created 1 s after the root, then one report a second.
    expect(rootSpan!.startTimeUnixNano).toBe(at(started));
    const second = (n: number) => at(new Date(Date.parse(started) + n * 1000).toISOString());
    expect(childSpan!.startTimeUnixNano).toBe(second(1));
    expect([step!.startTimeUnixNano, step!.endTimeUnixNano]).toEqual([second(4), second(8)]);
    expect([tool!.startTimeUnixNano, tool!.endTimeUnixNano]).toEqual([second(5), second(6)]);
    expect(tool!.status.code).toBe(1);
    expect(childSpan!.endTimeUnixNano).toBe(second(8));
    expect(attr(childSpan!, 'shopfloor.run.state')).toBe('SUCCEEDED');
    expect(attr(childSpan!, 'shopfloor.usage.total_tokens')).toBe(1234);
    expect(attr(rootSpan!, 'shopfloor.run.open')).toBe(true);
    // The same trace from the root run.
    expect((await t.call('GET', `/agent/runs/${root}/trace`)).json()).toEqual(body);
  });

  it('answers 404 to whoever may not read the run, and for a run that does not exist', async () => {
    const run = (await t.call('POST', '/agent/runs', { prompt: 'Mine' })).json().run_id as string;
    expectProblem(
      await t.call('GET', `/agent/runs/${run}/trace`, undefined, await outsiderKey(t)),
      404,
      'resource_not_found',
    );
    expectProblem(await t.call('GET', '/agent/runs/no-such-run/trace'), 404, 'resource_not_found');
  });
});

describe('shopfloor runs trace', () => {
  it('prints the trace, and sends it to an OTLP receiver with --otlp', async () => {
    const { root, child } = await runTree();
    const printed: string[] = [];
    expect(await traceRun(t.rt, ['trace', child], (l) => printed.push(l))).toBe(0);
    const trace = JSON.parse(printed[0]!);
    expect(trace).toEqual((await t.call('GET', `/agent/runs/${root}/trace`)).json());

    const receiver = await startReceiver(() => 200);
    try {
      const base = `http://127.0.0.1:${receiver.port}`;
      expect(await traceRun(t.rt, ['trace', root, '--otlp', base], () => {})).toBe(0);
      expect(receiver.received.map((r) => [r.url, r.headers['content-type']])).toEqual([
        ['/v1/traces', 'application/json'],
      ]);
      const spans = JSON.parse(receiver.received[0]!.body).resourceSpans[0].scopeSpans[0].spans as Span[];
      const ids = new Set(spans.map((s) => s.spanId));
      // Every parent is a span of the trace but the root run's, which has none.
      expect(spans.filter((s) => !s.parentSpanId).map((s) => s.spanId)).toEqual([runSpanIdOf(root)]);
      for (const s of spans) if (s.parentSpanId) expect(ids.has(s.parentSpanId), s.name).toBe(true);
      expect(await traceRun(t.rt, ['trace', 'no-such-run'], () => {})).toBe(1);
    } finally {
      await receiver.close();
    }
  });
});
