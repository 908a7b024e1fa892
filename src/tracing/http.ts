/**
 * A span for each HTTP request, named by method and route template, a child of the caller's W3C
 * `traceparent` when it sends one (a worker's reports on a run carry the run's): the request's
 * work (commands, reads) happens inside it. Installed only while tracing is on.
 */
import {
  context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Span,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Api } from '../http/api.js';
import type { Tracing } from './tracing.js';

const propagator = new W3CTraceContextPropagator();
const spans = new WeakMap<object, Span>();

export function traceRequests(app: Api, tracing: Tracing): void {
  if (!tracing.enabled) return;
  app.addHook('onRequest', (req, _reply, done) => {
    const parent = propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    const route = req.routeOptions.url ?? '(unmatched)';
    const span = tracing.tracer.startSpan(
      `${req.method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'http.route': route } },
      parent,
    );
    spans.set(req, span);
    // Everything after this hook, the handler included, runs with the span active.
    context.with(trace.setSpan(parent, span), done);
  });
  app.addHook('onResponse', (req, reply, done) => {
    const span = spans.get(req);
    if (span) {
      const runId = (req.params as Record<string, unknown> | undefined)?.run_id;
      if (typeof runId === 'string') span.setAttribute('shopfloor.run.id', runId);
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
}
