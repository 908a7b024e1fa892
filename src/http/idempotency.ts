/**
 * The `Idempotency-Key` request header (draft-ietf-httpapi-idempotency-key-header) on the routes
 * that opt in with `config: { idempotent: true }`: POSTs whose repetition would do it twice.
 *
 * A key is the caller's: scoped to the principal. The first request with a key reserves it (see
 * idempotency-record.ts) and, once answered, records its answer for its retries. Without the header
 * nothing changes. The rules: docs/api.md "Retries: the `Idempotency-Key` header".
 */
import { createHash, hkdfSync } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { timeOrderedId } from '../ids.js';
import { DomainError, InvalidRequest } from '../kernel/errors.js';
import type { Runtime } from '../runtime.js';
import { sealer, secretsKeyFor } from '../sealing.js';
import { commandContext } from './context.js';
import { idempotencyDecider, idempotencyStream } from './idempotency-record.js';
import './principal.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Honours an Idempotency-Key: a retry with the same key answers the first answer (http/idempotency). */
    idempotent?: boolean;
  }
}

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/**
 * A larger record is not kept (the key is released): EventStoreDB takes at most 1 MiB in one
 * append. No create's answer comes near it once compressed.
 */
const MAX_SEALED_CHARS = 960 * 1024;
const KEY_SYNTAX = '1 to 255 visible ASCII characters, bare or as a quoted string';

/**
 * The key an `Idempotency-Key` value carries: a Structured Fields string (RFC 8941, as the draft
 * writes it) or the bare value most clients send; null when it is not 1-255 visible ASCII
 * characters. Two header lines arrive joined by ", ", which no key may hold, so they are refused.
 */
export function parseIdempotencyKey(value: string): string | null {
  let key = value;
  // A value that opens a quote is a Structured Fields string, or nothing.
  if (value.startsWith('"')) {
    const quoted = /^"((?:[^"\\]|\\["\\])*)"$/.exec(value);
    if (!quoted) return null;
    key = quoted[1]!.replace(/\\(["\\])/g, '$1');
  }
  return /^[\x21-\x7e]{1,255}$/.test(key) ? key : null;
}

/** Plain objects with their keys sorted, so key order and whitespace do not make another request. */
const sortedKeys = (_key: string, value: unknown) =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : value;

/** What makes two requests with one key the same request: method, path and query, active team and body (as validated). */
function fingerprint(req: FastifyRequest): string {
  const hash = createHash('sha256').update(JSON.stringify([req.method, req.url, req.team?.uid ?? null]));
  return hash
    .update('\n')
    .update(JSON.stringify(req.body ?? null, sortedKeys))
    .digest('hex');
}

/**
 * Answers may show a credential once (an agent's API key, a webhook secret, an invitation code),
 * so they are sealed under a key derived from SECRETS_KEY and the Idempotency-Key itself, which
 * the log holds only hashed: opening one takes both the server's key and the client's.
 */
function answerSealer(rt: Runtime, scope: string, key: string) {
  const derived = hkdfSync('sha256', secretsKeyFor(rt.config), 'shopfloor idempotency-key', `${scope}\n${key}`, 32);
  const sealed = sealer(Buffer.from(derived));
  return {
    // Compressed first (ciphertext does not compress): the log keeps them for good.
    seal: (body: string) => sealed.seal(deflateRawSync(body).toString('base64')),
    open(record: string): string | null {
      const packed = sealed.open(record);
      try {
        return packed === null ? null : inflateRawSync(Buffer.from(packed, 'base64')).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}

/** Whether an answer asks to be retried: then it is not kept, so the retry runs the request again. */
function invitesRetry(status: number, contentType: unknown, body: string): boolean {
  let retryable: unknown;
  if (typeof contentType === 'string' && contentType.startsWith('application/problem+json')) {
    try {
      retryable = (JSON.parse(body) as { retryable?: unknown }).retryable;
    } catch {}
  }
  // A 5xx is retryable unless it says otherwise (read_model_failed: the change was saved).
  return retryable === true || (status >= 500 && retryable !== false);
}

interface Reserved {
  stream: string;
  attempt: string;
  sealer: ReturnType<typeof answerSealer>;
}

/** A request that reserved its key: the answer it gets is recorded for the key's retries. */
type Reservations = WeakMap<FastifyRequest, Reserved>;

/**
 * Reserves the request's key, or answers a retry with the answer recorded for it. After
 * authentication and validation: a request refused before it is checked reserves nothing.
 */
function reserveOrReplay(rt: Runtime, reserved: Reservations) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    if (!req.routeOptions.config.idempotent) return;
    const header = req.headers[IDEMPOTENCY_HEADER];
    if (header === undefined) return;
    const key = typeof header === 'string' ? parseIdempotencyKey(header) : null;
    if (key === null)
      throw new InvalidRequest(
        `The Idempotency-Key header must be ${KEY_SYNTAX}`,
        [{ path: `headers.${IDEMPOTENCY_HEADER}`, message: `must be ${KEY_SYNTAX}` }],
        'invalid_idempotency_key',
      );
    const principal = req.principal!;
    const scope = `${principal.type}:${principal.uid}`;
    const stream = idempotencyStream(scope, key);
    const attempt = timeOrderedId();
    const { state, events } = await rt.handle(
      stream,
      idempotencyDecider,
      {
        type: 'Reserve',
        data: { attempt, fingerprint: fingerprint(req), method: req.method, route: req.routeOptions.url ?? '' },
      },
      commandContext(req),
    );
    const seal = answerSealer(rt, scope, key);
    if (events.length > 0) {
      reserved.set(req, { stream, attempt, sealer: seal });
      return;
    }
    const answer = state!.answer!;
    const body = seal.open(answer.sealed_body);
    if (body === null)
      throw new DomainError(
        500,
        'idempotency_record_unreadable',
        'Idempotency record unreadable',
        'The answer recorded for this Idempotency-Key cannot be opened (was SECRETS_KEY changed?); check whether the first request took effect before sending it again with a new key',
      );
    reply.code(answer.status).header(REPLAYED_HEADER, 'true');
    if (answer.content_type) reply.header('content-type', answer.content_type);
    return reply.send(body === '' ? undefined : body);
  };
}

/** Records the answer of a request that reserved its key, before it leaves, so a retry after it finds it. */
function recordAnswer(rt: Runtime, reserved: Reservations) {
  return async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const mine = reserved.get(req);
    if (!mine) return payload;
    reserved.delete(req);
    const { stream, attempt } = mine;
    const status = reply.statusCode;
    const contentType = reply.getHeader('content-type');
    const body = payload === undefined || payload === null ? '' : typeof payload === 'string' ? payload : null;
    let sealed = body !== null && !invitesRetry(status, contentType, body) ? mine.sealer.seal(body) : null;
    if (body === null || (sealed !== null && sealed.length > MAX_SEALED_CHARS)) {
      req.log.warn({ status }, 'an answer too large or not text is not recorded for its Idempotency-Key');
      sealed = null;
    }
    try {
      await rt.handle(
        stream,
        idempotencyDecider,
        sealed !== null
          ? {
              type: 'RecordAnswer',
              data: {
                attempt,
                status,
                content_type: typeof contentType === 'string' ? contentType : null,
                sealed_body: sealed,
              },
            }
          : { type: 'Release', data: { attempt, status } },
        commandContext(req),
      );
    } catch (error) {
      // The answer still leaves; the key stays reserved until its lease ends.
      req.log.error({ err: error }, 'could not record the answer of an Idempotency-Key');
    }
    return payload;
  };
}

export function installIdempotency(app: FastifyInstance, rt: Runtime): void {
  const reserved: Reservations = new WeakMap();
  app.addHook('onRoute', (route) => {
    if (route.config?.idempotent && route.config.public)
      throw new Error(`${route.url}: an idempotent route needs a principal, whose keys they are`);
  });
  app.addHook('preHandler', reserveOrReplay(rt, reserved));
  app.addHook('onSend', recordAnswer(rt, reserved));
}
