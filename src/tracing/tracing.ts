/**
 * OpenTelemetry tracing, off unless the standard variables name an exporter: OTEL_TRACES_EXPORTER=otlp
 * (or OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set), and not
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. Spans go to the OTLP/HTTP (JSON) endpoint in
 * batches. One provider per runtime (tests run several servers); the active span follows the
 * request through async code (AsyncLocalStorage, registered once per process).
 */
import {
  context,
  type Context,
  INVALID_SPAN_CONTEXT,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface Tracing {
  /** False when tracing is off: nothing is recorded (the tracer is the API's no-op one). */
  enabled: boolean;
  tracer: Tracer;
  /** Runs `work` in a span named `name`, a child of the active span (or of `parent`); ends it, recording a throw. */
  inSpan<R>(name: string, attributes: Attributes, work: (span: Span) => Promise<R>, parent?: Context): Promise<R>;
  /** Sends what is buffered (tests, shutdown). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

type Attributes = Record<string, string | number | boolean | null | undefined>;

type Env = Partial<
  Record<
    | 'OTEL_SDK_DISABLED'
    | 'OTEL_TRACES_EXPORTER'
    | 'OTEL_EXPORTER_OTLP_ENDPOINT'
    | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
    | 'OTEL_SERVICE_NAME',
    string
  >
>;

/** The OTLP/HTTP traces URL the environment names, or null when tracing is off. */
function tracesEndpoint(env: Env): string | null {
  if (env.OTEL_SDK_DISABLED === 'true') return null;
  const exporter = env.OTEL_TRACES_EXPORTER;
  if (exporter === 'none') return null;
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (specific) return specific;
  if (base) return `${base.replace(/\/$/, '')}/v1/traces`;
  return exporter === 'otlp' ? 'http://localhost:4318/v1/traces' : null;
}

let contextManager = false;

const clean = (a: Attributes) =>
  Object.fromEntries(Object.entries(a).filter(([, v]) => v !== null && v !== undefined)) as Record<
    string,
    string | number | boolean
  >;

export function openTracing(env: Env): Tracing {
  const url = tracesEndpoint(env);
  const provider = url
    ? new BasicTracerProvider({
        resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'shopfloor' }),
        spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
      })
    : null;
  if (provider && !contextManager) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManager = true;
  }
  const tracer = provider ? provider.getTracer('shopfloor') : trace.getTracer('shopfloor-off');
  return {
    enabled: provider !== null,
    tracer,
    async inSpan(name, attributes, work, parent) {
      if (!provider) return work(trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
      return tracer.startActiveSpan(
        name,
        { attributes: clean(attributes) },
        parent ?? context.active(),
        async (span) => {
          try {
            return await work(span);
          } catch (error) {
            span.recordException(error as Error);
            span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
            throw error;
          } finally {
            span.end();
          }
        },
      );
    },
    flush: async () => provider?.forceFlush(),
    shutdown: async () => provider?.shutdown(),
  };
}
