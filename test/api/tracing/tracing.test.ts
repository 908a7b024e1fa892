/**
 * Live OpenTelemetry tracing, exported to an OTLP receiver the test starts on 127.0.0.1: a worker's
 * report on a run, sent with the traceparent the claim handed it, is a span of the run's trace
 * (the trace id and the run's span id the log-derived trace has); the command it ran is its child;
 * projector batches, reactions and outbound deliveries have spans of their own. Off by default.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSpanIdOf, runTraceparent, traceIdOf } from '../../../src/tracing/ids.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { startReceiver } from '../../helpers/receiver.js';
import { eventually } from '../../helpers/task-fixtures.js';

type Span = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
};

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let t: TestApp;
beforeAll(async () => {
  receiver = await startReceiver(() => 200);
  t = await startTestApp({
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`,
    OTEL_SERVICE_NAME: 'shopfloor-test',
    OUTBOUND_ALLOWED_RANGES: '127.0.0.0/8',
  });
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

/** The spans the receiver got so far (OTLP/JSON bodies posted to /v1/traces). */
const exported = (): Span[] =>
  receiver.received
    .filter((r) => r.url === '/v1/traces')
    .flatMap((r) =>
      JSON.parse(r.body).resourceSpans.flatMap((rs: { scopeSpans: Array<{ spans: Span[] }> }) =>
        rs.scopeSpans.flatMap((s) => s.spans),
      ),
    );
const attr = (s: Span, key: string) => Object.values(s.attributes.find((a) => a.key === key)?.value ?? {})[0];

describe('tracing', () => {
  it("puts a worker's reports in the run's trace, commands under requests, and background work in spans", async () => {
    await t.call('POST', `/teams/${t.teamUid}/outbound-webhooks`, { url: `${receiver.url}`, event_types: ['run.*'] });
    const run = (await t.call('POST', '/agent/runs', { prompt: 'Traced' })).json().run_id as string;
    const agent = (await t.call('POST', '/agent/identities', { name: 'Runner' })).json().uid as string;
    const key = (await t.call('POST', `/agent/identities/${agent}/api-keys`)).json().api_key as string;
    const worker = (await t.call('POST', '/agent/workers', { host: 'b1' }, key)).json().worker_id as string;
    const claimed = (await t.call('POST', `/agent/workers/${worker}/claim?wait_seconds=0`, undefined, key)).json().run;
    expect(claimed.run_id).toBe(run);
    expect(claimed.traceparent).toBe(runTraceparent(run, run));
    const ack = await t.call('POST', `/agent/workers/${worker}/runs/${run}/claim`, undefined, key, {
      'x-execution-id': claimed.execution_id,
      traceparent: claimed.traceparent,
    });
    expect(ack.statusCode).toBe(200);
    await eventually(async () => (receiver.received.some((r) => r.url === '/hooks') ? true : undefined));

    await t.rt.tracing.flush();
    const spans = exported();
    const report = spans.find((s) => s.name === 'POST /api/v1/agent/workers/:worker_id/runs/:run_id/claim')!;
    expect(report).toMatchObject({ traceId: traceIdOf(run), parentSpanId: runSpanIdOf(run) });
    expect(attr(report, 'shopfloor.run.id')).toBe(run);
    const command = spans.find((s) => s.parentSpanId === report.spanId && s.name.startsWith('command '))!;
    expect(command).toMatchObject({ traceId: traceIdOf(run), name: 'command ClaimRun' });
    expect(attr(command, 'shopfloor.run.id')).toBe(run);
    expect(spans.some((s) => s.name === 'projector batch')).toBe(true);
    expect(spans.some((s) => s.name.startsWith('react '))).toBe(true);
    expect(spans.some((s) => s.name === 'outbound delivery')).toBe(true);
    const resource = JSON.parse(receiver.received.find((r) => r.url === '/v1/traces')!.body).resourceSpans[0].resource;
    expect(resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'shopfloor-test' } });
  });

  it('is off unless the OTEL_* variables name an exporter', async () => {
    const off = await startTestApp();
    try {
      expect(off.rt.tracing.enabled).toBe(false);
    } finally {
      await off.close();
    }
  });
});
