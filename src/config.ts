/** Configuration from the environment, validated once at start-up. Every setting: docs/configuration.md. */
import path from 'node:path';
import v8 from 'node:v8';
import { z } from 'zod';

/** The longest wait of a worker's long poll (`POST /agent/workers/{id}/claim?wait_seconds=`). */
export const LONGEST_LONG_POLL_SECONDS = 30;

const seconds = (fallback: number, min = 0.1) => z.coerce.number().min(min).max(3600).default(fallback);
const whole = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

const schema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  DATA_DIR: z.string().default('./data'),
  EVENTSTORE_URL: z.string().optional(),
  /** This store's streams on an EventStoreDB shared with other stores (the API tests in CI): only those named with it. */
  EVENTSTORE_STREAM_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]*$/)
    .default(''),
  MONGODB_URL: z.string().optional(),
  MONGODB_DB: z.string().default('shopfloor'),
  PUBLIC_BASE_URL: z.string().url().optional(),
  WEBHOOK_BASE_URL: z.string().url().optional(),
  BOOTSTRAP_API_KEY: z.string().min(16).optional(),
  BOOTSTRAP_TEAM_NAME: z.string().min(1).default('Default team'),
  BOOTSTRAP_USER_EMAIL: z.string().email().default('admin@example.com'),
  /** Signs time-limited download URLs; generated into DATA_DIR when not given. Share it between instances. */
  URL_SIGNING_SECRET: z.string().min(32).optional(),
  /** Comma-separated CIDR ranges that outbound agent traffic leaves from. */
  EGRESS_RANGES: z.string().default(''),
  /** `metadata[key]=value` filters on GET /agent/runs; `false` answers them 403 `feature_not_available`. */
  RUN_METADATA_FILTERING: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /** Factory branches (propose, review and apply definitions); `false` answers their routes 403 `feature_not_available`. */
  FACTORY_BRANCHES: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  /** How often a worker heartbeats; it loses its runs after 3 missed intervals (fractions allowed, for tests). */
  WORKER_HEARTBEAT_SECONDS: z.coerce.number().min(0.05).max(3600).default(10),
  /** How long a worker has to acknowledge a run it was handed before the run is queued again. */
  WORKER_LEASE_SECONDS: z.coerce.number().min(0.05).max(3600).default(30),
  /**
   * Processes on one store: how long the owner of the projector, a reactor or the worker sweeper may
   * go without renewing its lease before another process takes over (renewed every fifth of it).
   */
  OWNERSHIP_LEASE_SECONDS: z.coerce.number().min(0.25).max(300).default(5),
  /**
   * Reactors: tries of a reaction that throws before its event is set aside; the pause before the
   * second try, doubled before each next one. The defaults wait about a minute in all: longer than
   * a worker's lease (a run handed to a worker is claimed or queued again by then).
   */
  REACTOR_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(6),
  REACTOR_RETRY_SECONDS: z.coerce.number().min(0.001).max(3600).default(1),
  /** The largest file (artifact or handoff file) a worker may upload. */
  WORKER_UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1024 * 1024 * 1024)
    .default(50 * 1024 * 1024),
  /** Seals stored secrets (AES-256-GCM): 32 bytes, base64. Generated into DATA_DIR when not given; share it between instances. */
  SECRETS_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes, base64-encoded')
    .optional(),
  /**
   * The most documents one page of an API list may walk when its filter has conditions no index
   * serves (a title search, a rare metadata pair): past it the page is cut short and the client
   * pages on from where the walk stopped (`has_next_page` with fewer items, maybe none).
   */
  LIST_MAX_SCAN: z.coerce.number().int().min(10).max(1_000_000).default(2000),
  /** Failed webhook authentications allowed per webhook and minute before the ingress answers 429. */
  WEBHOOK_FAILED_AUTH_PER_MINUTE: z.coerce.number().int().min(1).max(100000).default(30),
  /** Outbound webhooks: ranges they may reach besides public unicast addresses (comma-separated CIDRs, e.g. `127.0.0.0/8`). */
  OUTBOUND_ALLOWED_RANGES: z.string().default(''),
  /** Outbound webhooks: deliveries in flight at once, per process. */
  OUTBOUND_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  /** Outbound webhooks: how long an attempt waits for the receiver's answer. */
  OUTBOUND_TIMEOUT_SECONDS: z.coerce.number().min(0.05).max(300).default(10),
  /** Outbound webhooks: the first retry's delay; each next one is 4 times longer (at most 8 h), ±20 % jitter. */
  OUTBOUND_RETRY_BASE_SECONDS: z.coerce.number().min(0.05).max(3600).default(5),
  /** Outbound webhooks: a delivery is retried until this long after it was scheduled (at least a day by default). */
  OUTBOUND_RETRY_HOURS: z.coerce
    .number()
    .min(0.0001)
    .max(24 * 30)
    .default(24),
  /** Outbound webhooks: an endpoint that failed every attempt this long is disabled. */
  OUTBOUND_DISABLE_AFTER_HOURS: z.coerce
    .number()
    .min(0.0001)
    .max(24 * 30)
    .default(24),
  /** The model catalogue (YAML or JSON): models, the default, prices. Default: the one shipped. */
  MODELS_FILE: z.string().optional(),
  /** Concurrent webhook bodies read before their sender is authenticated (signature webhooks), in all and per webhook. */
  WEBHOOK_CONCURRENT_BODY_READS: z.coerce.number().int().min(1).max(100000).default(128),
  WEBHOOK_CONCURRENT_BODY_READS_PER_WEBHOOK: z.coerce.number().int().min(1).max(100000).default(16),
  /** The request line and headers must arrive within this time (Node's headersTimeout). */
  HTTP_HEADERS_TIMEOUT_SECONDS: seconds(10),
  /** The whole request, body included, must arrive within this time (Node's requestTimeout); answering takes what it takes. */
  HTTP_REQUEST_TIMEOUT_SECONDS: seconds(120),
  /** A connection with a request in flight and nothing sent either way for this long is closed; above the longest long poll. */
  HTTP_IDLE_TIMEOUT_SECONDS: seconds(60, LONGEST_LONG_POLL_SECONDS + 5),
  /** An idle keep-alive connection is closed after this long (Node's default; Fastify's own is 72 s). */
  HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: seconds(5),
  /** The request line and headers together are at most this many bytes, else 431 (Node's default). */
  HTTP_MAX_HEADER_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024)
    .default(16 * 1024),
  /** Connections beyond this many are closed as they arrive, so that clients cannot use up the process's descriptors. */
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(10_000),
  /** Load shedding: answer 503 while the event loop's mean delay, the V8 heap used or the RSS is over these (0: not checked). */
  LOAD_SHED_EVENT_LOOP_DELAY_MS: whole(1000),
  LOAD_SHED_HEAP_USED_BYTES: whole(Math.floor(v8.getHeapStatistics().heap_size_limit * 0.9)),
  LOAD_SHED_RSS_BYTES: whole(0),
  /** The console: a session ends after this many minutes without a request (README, Console). */
  CONSOLE_SESSION_IDLE_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 60)
    .default(30),
  /** The console: a session ends this many hours after sign-in, used or not. */
  CONSOLE_SESSION_MAX_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(30 * 24)
    .default(12),
  /** Event streams: open at once per API key (a console session counts as its key), else 429. */
  STREAM_MAX_PER_KEY: z.coerce.number().int().min(1).max(10_000).default(10),
  /** Event streams: open at once in this process, else 429. */
  STREAM_MAX_PER_PROCESS: z.coerce.number().int().min(1).max(100_000).default(2000),
  /** Event streams: the most past events one connection replays; past it the stream ends and the client resumes from its last id. */
  STREAM_REPLAY_MAX_EVENTS: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /** Event streams: bytes a stream may have waiting for a slow client; past it the stream is closed (the client resumes). */
  STREAM_BUFFER_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  /** Event streams: a comment line at least this often keeps an idle stream open through proxies. */
  STREAM_HEARTBEAT_SECONDS: z.coerce.number().min(0.05).max(15).default(15),
  /** Guardrails: what a run without a per-run cap reserves of a budget at least (USD; docs/features/guardrails.md). */
  BUDGET_RUN_ESTIMATE_FLOOR_USD: z.coerce.number().min(0).max(1_000_000).default(1),
  /** Guardrails: how often approvals, stuck runs and long-queued runs are checked (fractions allowed, for tests). */
  GUARDRAIL_SWEEP_SECONDS: z.coerce.number().min(0.05).max(3600).default(30),
  /** Guardrails: a team whose runs waited this long in the queue with no worker connected gets one notice. */
  GUARDRAIL_QUEUE_STALL_MINUTES: z.coerce
    .number()
    .min(1)
    .max(7 * 24 * 60)
    .default(15),
  /** `strict` fails an answer holding a field its route's response schema does not declare (tests). */
  RESPONSE_SCHEMAS: z.enum(['strip', 'strict']).default('strip'),
  /** `/metrics` asks for this bearer token (docs/operations.md, Metrics). */
  METRICS_TOKEN: z.string().min(16).optional(),
  /** `/metrics` is served on this port of HOST instead of the API's (0 picks a free one). */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** OpenTelemetry tracing (docs/operations.md, Tracing): off unless these name an exporter. */
  OTEL_SDK_DISABLED: z.string().optional(),
  OTEL_TRACES_EXPORTER: z.string().optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  OTEL_SERVICE_NAME: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

const checked = schema.refine((c) => c.HTTP_HEADERS_TIMEOUT_SECONDS <= c.HTTP_REQUEST_TIMEOUT_SECONDS, {
  message: 'HTTP_HEADERS_TIMEOUT_SECONDS must not exceed HTTP_REQUEST_TIMEOUT_SECONDS',
  path: ['HTTP_HEADERS_TIMEOUT_SECONDS'],
});

export type Config = z.infer<typeof schema> & { publicBaseUrl: string; webhookBaseUrl: string };

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = checked.parse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  const publicBaseUrl = (parsed.PUBLIC_BASE_URL ?? `http://${parsed.HOST}:${parsed.PORT}`).replace(/\/$/, '');
  return {
    ...parsed,
    DATA_DIR: path.resolve(parsed.DATA_DIR),
    publicBaseUrl,
    webhookBaseUrl: (parsed.WEBHOOK_BASE_URL ?? publicBaseUrl).replace(/\/$/, ''),
  };
}
