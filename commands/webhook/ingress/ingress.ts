/**
 * POST /webhooks/w/<uid>[/<token>]: the public entry point. Its checks, in order (why this order,
 * and the limits: docs/features/webhooks.md "Ingress checks", "Budgets" and "Delivery identity"):
 *   1. the webhook: unknown, disabled or deleted → 404
 *   2. a token or url_token credential → 401
 *   3. the raw body, streamed within its limit → 413; of a sender not known yet (signature
 *      webhooks) only while body-reads.ts allows, else 503
 *   4. a signature over the raw body → 401
 *   5. the delivery rate of authenticated senders (rate-limit.ts) → 429
 *   6. JSON → 400
 *   7. the identity, from what the signature covers (verify.ts) → 202 Accepted or Duplicate
 * Refusals before authentication spend the failed-authentication budget (attempt.ts).
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { timeOrderedId } from '../../../src/ids.js';
import { z } from 'zod';
import { ConcurrencyError } from '../../../src/eventstore/port.js';
import { sendProblem } from '../../../src/http/problem.js';
import { boundedJson, jsonBoundsProblem, MAX_JSON_DEPTH } from '../../../src/http/schemas.js';
import type { Runtime } from '../../../src/runtime.js';
import { webhooksProjection } from '../../../projections/webhook/webhooks.js';
import { resolveWebhookSecret, webhookState } from './webhook-state.js';
import type { WebhookState } from '../webhooks-decider.js';
import { deliveryStream } from '../events.js';
import { type Attempt, attemptOf, type STRANGER_REASONS } from './attempt.js';
import { countDelivery, deliveriesCounter } from './metrics.js';
import { MAX_WEBHOOK_BODY_BYTES, readLimitedBody } from './body.js';
import { boundedBodyReads } from './body-reads.js';
import { throttledLog } from '../../../src/http/throttled-log.js';
import { type RateLimiter, slidingWindow } from './rate-limit.js';
import { firstHeader, safeEqual, signedDeliveryId, type Verified, verifySignature } from './verify.js';
import type { Api } from '../../../src/http/api.js';

export const DELIVERIES_PER_MINUTE = 60;
const SERVICE_DELIVERY_HEADER = 'x-service-delivery-id';
const MAX_IDENTITY_LENGTH = 200;
const BUSY_RETRY_AFTER_SECONDS = 5;

const webhookUid = z.string().max(128).describe('The webhook UID, as in its ingress_url');
const params = z.object({ webhook_uid: webhookUid });
const tokenParams = z.object({
  webhook_uid: webhookUid,
  token: z.string().max(2048).describe('The secret of a url_token webhook: the URL itself is the credential'),
});

/**
 * Any JSON value; the handler reads the raw bytes itself (signatures cover them), whatever the
 * Content-Type, and checks the bounds itself (step 7): this schema documents them.
 */
const anyJson = boundedJson({ maxBytes: MAX_WEBHOOK_BODY_BYTES }).describe(
  `Any JSON value (object, array or scalar), at most 262,144 bytes, nested at most ${MAX_JSON_DEPTH} levels; the Content-Type is not enforced`,
);

const accepted = z.object({
  delivery_id: z.string().describe('This attempt, as the delivery log names it (also for a Duplicate)'),
});

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

const idIdentity = (id: string) => (id.length <= MAX_IDENTITY_LENGTH ? `id:${id}` : `id-sha256:${sha256(id)}`);

/**
 * The delivery's identity. A signed delivery: the id its signature covers, else its (signed) body,
 * whatever delivery headers come with it. Otherwise the spec's order of preference: the
 * configured header, X-Service-Delivery-Id, the body.
 */
function identityOf(
  webhook: WebhookState,
  req: FastifyRequest,
  body: Buffer,
  payload: unknown,
  verified: Verified | null,
): string {
  const id = verified
    ? signedDeliveryId(webhook.signature_scheme!, verified, payload)
    : [
        webhook.delivery_id_header ? firstHeader(req.headers, webhook.delivery_id_header) : undefined,
        firstHeader(req.headers, SERVICE_DELIVERY_HEADER),
      ].find((v) => v !== undefined && v.trim() !== '');
  return id ? idIdentity(id) : `body-sha256:${sha256(body)}`;
}

/** The checks of one delivery attempt, in the order above. */
class Ingress {
  private readonly webhooks;
  // Counted in the read store: one budget for all the processes of a store.
  private readonly failedAuth: RateLimiter;
  private readonly deliveries: RateLimiter;
  private readonly bodyReads;
  private readonly trouble;

  constructor(private readonly rt: Runtime) {
    this.webhooks = rt.readModel(webhooksProjection);
    deliveriesCounter(rt);
    this.failedAuth = slidingWindow(rt.docs, 'failed_auth', rt.config.WEBHOOK_FAILED_AUTH_PER_MINUTE);
    this.deliveries = slidingWindow(rt.docs, 'deliveries', DELIVERIES_PER_MINUTE);
    this.bodyReads = boundedBodyReads(
      rt.config.WEBHOOK_CONCURRENT_BODY_READS,
      rt.config.WEBHOOK_CONCURRENT_BODY_READS_PER_WEBHOOK,
    );
    this.trouble = throttledLog(rt.log);
  }

  /** 1. The webhook as its factory's stream tells it (the read model only maps uid → factory); null: 404. */
  private async liveWebhook(uid: string, token: string | undefined): Promise<WebhookState | null> {
    const doc = await this.webhooks.get(uid);
    const webhook = doc ? await webhookState(this.rt, doc.factory_uid, uid) : null;
    if (!webhook || webhook.deleted || !webhook.enabled) return null;
    return token !== undefined && webhook.auth_mode !== 'url_token' ? null : webhook;
  }

  /**
   * A sender not authenticated, refused: logged while the failed-authentication budget lasts, past
   * it counted (the delivery log shows the count later, the process log one line a second). Null,
   * or the seconds until the budget has room again.
   */
  private async refuseStranger(req: FastifyRequest, attempt: Attempt, reason: StrangerReason, size: number) {
    const uid = attempt.base.webhook_uid;
    const wait = await this.failedAuth.takeOrCount(uid, Date.now(), reason, size);
    if (wait === null) await attempt.reject(reason, size);
    else {
      countDelivery(this.rt, `rejected_${reason}`);
      this.trouble.refused('ingress_counted', req, { webhook_uid: uid, reason });
    }
    return wait;
  }

  /** 401, or 429 past the budget: a stranger is slowed, whoever holds the credential never is. */
  private async unauthorized(req: FastifyRequest, reply: FastifyReply, attempt: Attempt, size: number) {
    const wait = await this.refuseStranger(req, attempt, 'auth', size);
    if (wait !== null) return tooMany(reply, wait, 'too many failed authentications for this webhook');
    return sendProblem(
      reply,
      401,
      'authentication_failed',
      'Unauthorized',
      'the delivery did not authenticate for this webhook',
    );
  }

  /** 3. The raw body, never more than the limit; of an unknown sender, only while the bound allows. */
  private async readBody(req: FastifyRequest, reply: FastifyReply, webhook: WebhookState, attempt: Attempt) {
    const signed = webhook.auth_mode === 'signature';
    const release = signed ? this.bodyReads.take(webhook.uid) : () => {};
    if (!release) {
      this.trouble.refused('ingress_busy', req, { webhook_uid: webhook.uid });
      reply.header('retry-after', String(BUSY_RETRY_AFTER_SECONDS)).header('connection', 'close');
      const detail = `the ingress is reading as many unauthenticated bodies as it may; try again in ${BUSY_RETRY_AFTER_SECONDS} s`;
      return sendProblem(reply, 503, 'ingress_busy', 'Service unavailable', detail, undefined, true);
    }
    const read = await readLimitedBody(req.raw).finally(release);
    if (read.ok) return read.bytes;
    // Cut off (the client left, or the request timeout answered it): no one is there to answer.
    if (!read.too_large)
      return sendProblem(reply, 400, 'body_incomplete', 'Incomplete body', 'the body did not arrive');
    // A signature webhook's sender is not known yet: a stranger, budgeted like a failed authentication.
    if (signed) await this.refuseStranger(req, attempt, 'too_large', read.size_bytes);
    else await attempt.reject('too_large', read.size_bytes);
    reply.header('connection', 'close');
    return sendProblem(reply, 413, 'payload_too_large', 'Payload too large', 'a webhook body is at most 262,144 bytes');
  }

  async ingest(req: FastifyRequest<{ Params: z.infer<typeof params> & { token?: string } }>, reply: FastifyReply) {
    const received_at = new Date();
    const { webhook_uid: uid, token } = req.params;
    const webhook = await this.liveWebhook(uid, token);
    if (!webhook)
      return sendProblem(reply, 404, 'webhook_not_found', 'Not found', 'no such webhook, or it is disabled');
    const attempt = attemptOf(this.rt, req, webhook, this.failedAuth, { delivery_id: timeOrderedId(), received_at });
    const secret = await resolveWebhookSecret(this.rt, webhook);

    // 2. Credentials that do not need the body: checked whatever strangers sent before.
    if (webhook.auth_mode !== 'signature' && !tokenMatches(webhook, req, token, secret))
      return this.unauthorized(req, reply, attempt, Number(req.headers['content-length']) || 0);

    const body = await this.readBody(req, reply, webhook, attempt);
    if (!Buffer.isBuffer(body)) return body;

    // 4. Signatures over the body.
    let verified: Verified | null = null;
    if (webhook.auth_mode === 'signature') {
      const at = Math.floor(received_at.getTime() / 1000);
      verified =
        secret === null ? null : await verifySignature(webhook.signature_scheme!, secret, body, req.headers, at);
      if (!verified) return this.unauthorized(req, reply, attempt, body.length);
    }

    // 5. Only authenticated senders spend the delivery budget (checked and spent as one).
    const rateWait = await this.deliveries.take(uid, Date.now());
    if (rateWait !== null)
      return tooMany(reply, rateWait, `at most ${DELIVERIES_PER_MINUTE} deliveries a minute per webhook`);
    return this.accept(req, reply, webhook, attempt, body, verified);
  }

  /** 6 and 7: the JSON, then the identity's reservation. */
  private async accept(
    req: FastifyRequest,
    reply: FastifyReply,
    webhook: WebhookState,
    attempt: Attempt,
    body: Buffer,
    verified: Verified | null,
  ) {
    // Any JSON value, but not one nested so deep that reading it back (the delivery log) would
    // fail, nor one with a number JSON.parse reads as Infinity (automations would see null).
    const json = parseJson(body);
    // Its size was bounded as raw bytes (step 3); only the depth and the numbers are left to check.
    const unfit = json.ok ? jsonBoundsProblem(json.value, { maxBytes: Number.POSITIVE_INFINITY }) : null;
    if (!json.ok || unfit) {
      await attempt.reject('invalid_json', body.length);
      if (!unfit) return sendProblem(reply, 400, 'invalid_json', 'Invalid JSON', 'the body is not valid UTF-8 JSON');
      const errors = [{ path: 'body', message: unfit }];
      return sendProblem(reply, 400, 'invalid_json', 'Invalid JSON', `a webhook body ${unfit}`, errors);
    }

    // First acceptance of this identity wins the reservation stream; any other is a Duplicate.
    const identity = identityOf(webhook, req, body, json.value, verified);
    const stream = deliveryStream(webhook.uid, sha256(identity));
    const payload_blob = await this.rt.blobs.put(body);
    const { base } = attempt;
    try {
      const data = { ...base, identity, size_bytes: body.length, payload_blob };
      await attempt.write(stream, { type: 'DeliveryAccepted', data }, 'no_stream');
    } catch (error) {
      if (!(error instanceof ConcurrencyError)) throw error;
      const [first] = await this.rt.events.readStream(stream, { maxCount: 1 });
      const duplicate_of = String((first?.data as { delivery_id?: unknown } | undefined)?.delivery_id ?? '');
      const data = { ...base, identity, size_bytes: body.length, duplicate_of };
      await attempt.write(stream, { type: 'DeliveryDuplicated', data }, 'any');
    }
    return reply.code(202).send({ delivery_id: base.delivery_id });
  }
}

export default function webhookIngress(app: Api, rt: Runtime): void {
  const ingress = new Ingress(rt);
  const ingest = (req: FastifyRequest<{ Params: z.infer<typeof params> & { token?: string } }>, reply: FastifyReply) =>
    ingress.ingest(req, reply);
  app.register(async (scope) => {
    // The handler streams the raw body itself, whatever the Content-Type says.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null));
    // Public (the credential is the webhook's own, not an API key) and served under WEBHOOK_BASE_URL.
    const schema = {
      body: anyJson,
      response: { 202: accepted },
      tags: ['webhooks'],
      summary: 'Deliver an event to a custom webhook',
      description:
        '202 means accepted for evaluation (or a Duplicate), not that an automation fired. Authentication by ' +
        "the webhook's authMode: token (Authorization: Bearer <secret>), url_token (the token path segment) " +
        'or signature (the provider scheme).',
      security: [],
      servers: [{ url: rt.config.webhookBaseUrl }],
    };
    scope.post('/webhooks/w/:webhook_uid', { schema: { ...schema, params } }, ingest);
    scope.post('/webhooks/w/:webhook_uid/:token', { schema: { ...schema, params: tokenParams } }, ingest);
  });
}

type StrangerReason = (typeof STRANGER_REASONS)[number];

const tooMany = (reply: FastifyReply, seconds: number, detail: string) => {
  reply.header('retry-after', String(seconds));
  return sendProblem(reply, 429, 'rate_limited', 'Too many requests', detail, undefined, true);
};

/** 2. A token webhook's bearer token, or a url_token webhook's path segment, is its secret. */
function tokenMatches(webhook: WebhookState, req: FastifyRequest, token: string | undefined, secret: string | null) {
  const given =
    webhook.auth_mode === 'token' ? /^Bearer (.+)$/i.exec(firstHeader(req.headers, 'authorization') ?? '')?.[1] : token;
  return secret !== null && given !== undefined && safeEqual(given, secret);
}

/** Valid UTF-8 holding one JSON value (JSON.parse is iterative for nesting, so depth cannot crash it). */
const parseJson = (bytes: Buffer): { ok: true; value: unknown } | { ok: false } => {
  try {
    // A BOM stays, and fails.
    return { ok: true, value: JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)) };
  } catch {
    return { ok: false };
  }
};
