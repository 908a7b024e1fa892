/**
 * The dispatcher: sends the deliveries that are due, signed with Standard Webhooks, at most
 * OUTBOUND_CONCURRENCY at a time (p-queue), and records each attempt on the delivery's stream.
 * It never runs inside a command: the reactor only schedules. What is due is read from the
 * deliveries read model, so a restarted server picks up every pending delivery; one whose
 * success was recorded is never sent again (a crash between the receiver's 2xx and that record
 * sends it once more, with the same `webhook-id`).
 */
import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import PQueue from 'p-queue';
import { Webhook } from 'standardwebhooks';
import type { Service } from '../../src/feature.js';
import { timeOrderedId } from '../../src/ids.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { type AllowedRanges, guardedPost, parseAllowedRanges } from '../../src/net/egress.js';
import type { Runtime } from '../../src/runtime.js';
import { sealerFor } from '../../src/sealing.js';
import { outboundDeliveriesProjection } from '../../projections/outbound/outbound-deliveries.js';
import { outboundWebhookDecider } from './outbound-webhook-decider.js';
import { deliveryDecider } from './outbound-delivery-decider.js';
import { outboundDeliveryStream, outboundWebhooksStream } from './events.js';
import { own } from '../../src/own-keys.js';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { countEndpointDisabled, countOutboundAttempt, declareOutboundMetrics } from './metrics.js';

const TICK_MS = 500;
const DUE_PAGE = 200;
const MAX_DELAY_MS = 8 * 3_600_000;
const USER_AGENT = 'Shopfloor-Webhooks/1';

/**
 * The delay before retry `attempt + 1`: base × 4^(attempt-1), at most 8 h, ±20 % jitter. The
 * jitter is drawn from the delivery and attempt, not a random source: deliveries that failed
 * together still spread out, and a test or a replay sees the same delays every time.
 */
function retryDelayMs(baseMs: number, deliveryId: string, attempt: number): number {
  const jitter = createHash('sha256').update(`${deliveryId}:${attempt}`).digest().readUInt32BE(0) / 2 ** 32;
  return Math.round(Math.min(baseMs * 4 ** (attempt - 1), MAX_DELAY_MS) * (0.8 + 0.4 * jitter));
}

const systemContext = (rt: Runtime, team_uid: string): CommandContext => ({
  now: rt.clock.now().toISOString(),
  actor: { type: 'system', uid: 'outbound-dispatcher' },
  teams: {},
  team_uid,
  correlation_id: timeOrderedId(),
  causation_id: null,
  request_id: null,
});

interface Dispatcher {
  wake(): void;
}
const running = new WeakMap<Runtime, Dispatcher>();

/** Asks this process's dispatcher to look for due deliveries now (the reactor scheduled one). */
export const wakeDispatcher = (rt: Runtime) => running.get(rt)?.wake();

/** Sends one delivery if it is still pending and due, and records the attempt. */
/** One delivery attempt, in a span of its own while tracing is on (a dispatcher pass is no request's). */
const attempt = (rt: Runtime, allowed: AllowedRanges, deliveryId: string): Promise<void> =>
  rt.tracing.inSpan(
    'outbound delivery',
    { 'shopfloor.delivery.id': deliveryId },
    () => attemptOnce(rt, allowed, deliveryId),
    ROOT_CONTEXT,
  );

async function attemptOnce(rt: Runtime, allowed: AllowedRanges, deliveryId: string): Promise<void> {
  const stream = outboundDeliveryStream(deliveryId);
  const d = await rt.state(deliveryDecider, stream);
  const now = rt.clock.now();
  if (d.status !== 'pending' || (d.next_attempt_at && d.next_attempt_at > now.toISOString())) return;
  const context = systemContext(rt, d.team_uid);
  const webhooks = outboundWebhooksStream(d.team_uid);
  const endpoint = own((await rt.state(outboundWebhookDecider, webhooks)).endpoints, d.webhook_uid);

  if (!endpoint?.enabled) {
    const reason = endpoint ? 'the endpoint is disabled' : 'the endpoint was deleted';
    await rt.execute(
      stream,
      deliveryDecider,
      { type: 'AbandonDelivery', data: { delivery_id: deliveryId, reason } },
      context,
    );
    countOutboundAttempt(rt, 'abandoned');
    return;
  }
  const secret = sealerFor(rt.config).open(endpoint.secret);
  const at = now.toISOString();
  const started = performance.now();
  let status_code: number | null = null;
  let error: string | null = null;
  try {
    if (!secret) throw new Error('the signing secret cannot be opened (SECRETS_KEY changed?)');
    const signature = new Webhook(secret).sign(d.message_id, now, d.body);
    const res = await guardedPost(
      endpoint.url,
      d.body,
      {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': d.message_id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signature,
      },
      { allowed, timeoutMs: rt.config.OUTBOUND_TIMEOUT_SECONDS * 1000 },
    );
    status_code = res.status;
    if (res.status < 200 || res.status >= 300)
      error = `HTTP ${res.status}${res.body ? `: ${res.body.slice(0, 200)}` : ''}`;
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  const latency_ms = Math.round(performance.now() - started);
  const ok = error === null;
  const done = rt.clock.now();
  const retryUntil = Date.parse(d.scheduled_at) + rt.config.OUTBOUND_RETRY_HOURS * 3_600_000;
  const next = done.getTime() + retryDelayMs(rt.config.OUTBOUND_RETRY_BASE_SECONDS * 1000, deliveryId, d.attempts + 1);
  // The window is judged at the attempt's own recorded time, so the log shows every retry inside it.
  const outcome = ok ? 'delivered' : now.getTime() >= retryUntil ? 'failed' : 'retry';
  await rt.execute(
    stream,
    deliveryDecider,
    {
      type: 'RecordAttempt',
      data: {
        delivery_id: deliveryId,
        attempt: d.attempts + 1,
        at,
        status_code,
        latency_ms,
        error,
        outcome,
        next_attempt_at: outcome === 'retry' ? new Date(next).toISOString() : null,
      },
    },
    context,
  );
  countOutboundAttempt(rt, outcome);
  const health = await rt.execute(
    webhooks,
    outboundWebhookDecider,
    {
      type: 'RecordEndpointHealth',
      data: {
        uid: endpoint.uid,
        team_uid: d.team_uid,
        ok,
        at,
        disable_after_ms: rt.config.OUTBOUND_DISABLE_AFTER_HOURS * 3_600_000,
        gave_up_since: outcome === 'failed' ? (d.first_attempt_at ?? at) : null,
      },
    },
    context,
  );
  if (health.events.some((e) => e.type === 'OutboundWebhookDisabled')) countEndpointDisabled(rt);
}

export function startDispatcher(rt: Runtime): Service {
  const allowed = parseAllowedRanges(rt.config.OUTBOUND_ALLOWED_RANGES);
  declareOutboundMetrics(rt);
  const deliveries = rt.readModel(outboundDeliveriesProjection);
  const queue = new PQueue({ concurrency: rt.config.OUTBOUND_CONCURRENCY });
  const inFlight = new Set<string>();
  const abort = new AbortController();
  let woken: (() => void) | null = null;
  running.set(rt, { wake: () => woken?.() });

  async function pass(): Promise<void> {
    // Bounded: while the queue holds a page's worth, the next pass waits for it to drain.
    if (queue.size >= DUE_PAGE) return;
    const due = await deliveries.find({
      filter: { status: 'pending', next_attempt_at: { $lte: rt.clock.now().toISOString() } },
      sort: [
        ['next_attempt_at', 'asc'],
        ['id', 'asc'],
      ],
      limit: DUE_PAGE,
    });
    for (const d of due.items) {
      if (inFlight.has(d.delivery_id)) continue;
      inFlight.add(d.delivery_id);
      queue
        .add(() => attempt(rt, allowed, d.delivery_id))
        .catch((error: unknown) => rt.log.error({ err: error, delivery: d.delivery_id }, 'outbound delivery failed'))
        .finally(() => inFlight.delete(d.delivery_id));
    }
  }

  const loop = (async () => {
    while (!abort.signal.aborted) {
      try {
        await pass();
      } catch (error) {
        rt.log.error({ err: error }, 'outbound dispatcher pass failed; trying again');
      }
      const wake = new Promise<void>((resolve) => (woken = resolve));
      await Promise.race([wake, delay(TICK_MS, undefined, { signal: abort.signal }).catch(() => {})]);
      woken = null;
    }
  })();

  return {
    async stop() {
      abort.abort();
      woken?.();
      await loop;
      queue.clear();
      await queue.onIdle();
      running.delete(rt);
    },
  };
}
