/**
 * POST /webhooks/w/<uid>[/<token>]: the public entry point. Order of checks, so that a sender
 * without the credential learns nothing beyond the spec's statuses:
 *   1. unknown, disabled or deleted webhook (or a token segment on a webhook without url_token) → 404
 *   2. failed-authentication budget used up → 429 (before looking at any credential)
 *   3. token / url_token: credential from the header or path → 401 (counted against the budget)
 *   4. raw body streamed up to 262,144 bytes → 413 (never buffered past the limit); on signature
 *      webhooks, whose senders are not known yet, only while the bound on such reads allows
 *      (body-reads.ts), else 503 before reading it
 *   5. signature schemes: the provider signature over the raw body → 401 (counted)
 *   6. delivery rate of authenticated senders, 60 a minute → 429 (budgets counted in the store, so
 *      once for all processes: rate-limit.ts)
 *   7. JSON, nested at most 64 levels → 400
 *   8. identity reserved (`delivery-<webhook>-<hash>`, no_stream) → 202 Accepted, or 202 Duplicate.
 * Rejections at 3, 4, 5 and 7 are logged; 404, 429 and 503 are not (they would let anyone fill the log).
 * A signed delivery's identity comes from what its signature covers only (verify.ts), never from
 * a header the sender may change, so a replayed delivery is a Duplicate.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { timeOrderedId } from '../../../src/ids.js';
import { z } from 'zod';
import { ConcurrencyError, type EventMetadata } from '../../../src/eventstore/port.js';
import { sendProblem } from '../../../src/http/problem.js';
import { boundedJson, jsonBoundsProblem, MAX_JSON_DEPTH } from '../../../src/http/schemas.js';
import type { Runtime } from '../../../src/runtime.js';
import { webhooksProjection } from '../../../projections/webhooks.js';
import { resolveWebhookSecret, webhookState } from './state.js';
import type { WebhookState } from '../decider.js';
import {
  type DeliveryEvent,
  type DeliveryRejectionReason,
  deliveryStream,
  rejectedDeliveriesStream,
} from '../events.js';
import { MAX_WEBHOOK_BODY_BYTES, readLimitedBody } from './body.js';
import { boundedBodyReads } from './body-reads.js';
import { throttledLog } from '../../../src/http/throttled-log.js';
import { slidingWindow } from './rate-limit.js';
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

export default function webhookIngress(app: Api, rt: Runtime): void {
  const webhooks = rt.readModel(webhooksProjection);
  // Counted in the read store: one budget for all the processes of a store.
  const failedAuth = slidingWindow(rt.docs, 'failed_auth', rt.config.WEBHOOK_FAILED_AUTH_PER_MINUTE);
  const deliveries = slidingWindow(rt.docs, 'deliveries', DELIVERIES_PER_MINUTE);
  const bodyReads = boundedBodyReads(
    rt.config.WEBHOOK_CONCURRENT_BODY_READS,
    rt.config.WEBHOOK_CONCURRENT_BODY_READS_PER_WEBHOOK,
  );
  const trouble = throttledLog(rt.log);

  const tooMany = (reply: FastifyReply, seconds: number, detail: string) => {
    reply.header('retry-after', String(seconds));
    return sendProblem(reply, 429, 'rate_limited', 'Too many requests', detail, undefined, true);
  };

  async function ingest(
    req: FastifyRequest<{ Params: z.infer<typeof params> & { token?: string } }>,
    reply: FastifyReply,
  ) {
    const receivedAt = new Date();
    const deliveryId = timeOrderedId();
    const { webhook_uid: uid, token } = req.params;

    // 1. The webhook as its factory's stream tells it (the read model only maps uid → factory).
    const doc = await webhooks.get(uid);
    const webhook = doc ? await webhookState(rt, doc.factory_uid, uid) : null;
    if (!webhook || webhook.deleted || !webhook.enabled || (token !== undefined && webhook.auth_mode !== 'url_token')) {
      return sendProblem(reply, 404, 'webhook_not_found', 'Not found', 'no such webhook, or it is disabled');
    }

    const base = {
      webhook_uid: uid,
      factory_uid: webhook.factory_uid,
      team_uid: webhook.team_uid,
      delivery_id: deliveryId,
      received_at: receivedAt.toISOString(),
    };
    const metadata: EventMetadata = {
      actor: { type: 'system', uid: `webhook:${uid}` },
      team_uid: webhook.team_uid,
      correlation_id: deliveryId,
      causation_id: null,
      request_id: req.id,
      occurred_at: base.received_at,
    };
    const write = async (stream: string, event: DeliveryEvent, expected: 'any' | 'no_stream') => {
      const { position } = await rt.events.append(
        stream,
        [{ id: timeOrderedId(), type: event.type, data: event.data, metadata }],
        expected,
      );
      await rt.projector.waitFor(position);
    };
    const reject = async (reason: DeliveryRejectionReason, size_bytes: number) =>
      write(rejectedDeliveriesStream(uid), { type: 'DeliveryRejected', data: { ...base, size_bytes, reason } }, 'any');
    const unauthorized = async (size_bytes: number) => {
      await failedAuth.hit(uid, Date.now());
      await reject('auth', size_bytes);
      return sendProblem(
        reply,
        401,
        'authentication_failed',
        'Unauthorized',
        'the delivery did not authenticate for this webhook',
      );
    };
    const declaredSize = Number(req.headers['content-length']) || 0;

    // 2. Brute force stops here, before any credential is compared.
    const wait = await failedAuth.exhausted(uid, Date.now());
    if (wait !== null) return tooMany(reply, wait, 'too many failed authentications for this webhook');

    const secret = await resolveWebhookSecret(rt, webhook);
    // 3. Credentials that do not need the body.
    if (webhook.auth_mode !== 'signature') {
      const given =
        webhook.auth_mode === 'token'
          ? /^Bearer (.+)$/i.exec(firstHeader(req.headers, 'authorization') ?? '')?.[1]
          : token;
      if (secret === null || given === undefined || !safeEqual(given, secret)) return unauthorized(declaredSize);
    }

    // 4. The raw body, never more than the limit; of an unknown sender, only while the bound allows.
    const release = webhook.auth_mode === 'signature' ? bodyReads.take(uid) : () => {};
    if (!release) {
      trouble.refused('ingress_busy', req, { webhook_uid: uid });
      reply.header('retry-after', String(BUSY_RETRY_AFTER_SECONDS)).header('connection', 'close');
      return sendProblem(
        reply,
        503,
        'ingress_busy',
        'Service unavailable',
        `the ingress is reading as many unauthenticated bodies as it may; try again in ${BUSY_RETRY_AFTER_SECONDS} s`,
        undefined,
        true,
      );
    }
    const read = await readLimitedBody(req.raw).finally(release);
    // Cut off (the client left, or the request timeout answered it): no one is there to answer.
    if (!read.ok && !read.too_large) {
      return sendProblem(reply, 400, 'body_incomplete', 'Incomplete body', 'the body did not arrive');
    }
    if (!read.ok) {
      await reject('too_large', read.size_bytes);
      reply.header('connection', 'close');
      return sendProblem(
        reply,
        413,
        'payload_too_large',
        'Payload too large',
        'a webhook body is at most 262,144 bytes',
      );
    }
    const body = read.bytes;

    // 5. Signatures over the body.
    let verified: Verified | null = null;
    if (webhook.auth_mode === 'signature') {
      verified =
        secret === null
          ? null
          : await verifySignature(
              webhook.signature_scheme!,
              secret,
              body,
              req.headers,
              Math.floor(receivedAt.getTime() / 1000),
            );
      if (!verified) return unauthorized(body.length);
    }

    // 6. Only authenticated senders spend the delivery budget (checked and spent as one).
    const rateWait = await deliveries.take(uid, Date.now());
    if (rateWait !== null)
      return tooMany(reply, rateWait, `at most ${DELIVERIES_PER_MINUTE} deliveries a minute per webhook`);

    // 7. Any JSON value, but not one nested so deep that reading it back (the delivery log) would
    // fail, nor one with a number JSON.parse reads as Infinity (automations would see null).
    const json = parseJson(body);
    // Its size was bounded as raw bytes (step 4); only the depth and the numbers are left to check.
    const unfit = json.ok ? jsonBoundsProblem(json.value, { maxBytes: Number.POSITIVE_INFINITY }) : null;
    if (!json.ok || unfit) {
      await reject('invalid_json', body.length);
      if (!unfit) return sendProblem(reply, 400, 'invalid_json', 'Invalid JSON', 'the body is not valid UTF-8 JSON');
      const errors = [{ path: 'body', message: unfit }];
      return sendProblem(reply, 400, 'invalid_json', 'Invalid JSON', `a webhook body ${unfit}`, errors);
    }

    // 8. First acceptance of this identity wins the reservation stream; any other is a Duplicate.
    const identity = identityOf(webhook, req, body, json.value, verified);
    const stream = deliveryStream(uid, sha256(identity));
    const payload_blob = await rt.blobs.put(body);
    try {
      await write(
        stream,
        { type: 'DeliveryAccepted', data: { ...base, identity, size_bytes: body.length, payload_blob } },
        'no_stream',
      );
    } catch (error) {
      if (!(error instanceof ConcurrencyError)) throw error;
      const [first] = await rt.events.readStream(stream, { maxCount: 1 });
      const duplicate_of = String((first?.data as { delivery_id?: unknown } | undefined)?.delivery_id ?? '');
      await write(
        stream,
        { type: 'DeliveryDuplicated', data: { ...base, identity, size_bytes: body.length, duplicate_of } },
        'any',
      );
    }
    return reply.code(202).send({ delivery_id: deliveryId });
  }

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

/** Valid UTF-8 holding one JSON value (JSON.parse is iterative for nesting, so depth cannot crash it). */
const parseJson = (bytes: Buffer): { ok: true; value: unknown } | { ok: false } => {
  try {
    // A BOM stays, and fails.
    return { ok: true, value: JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)) };
  } catch {
    return { ok: false };
  }
};
