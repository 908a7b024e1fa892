/**
 * The listener's own limits: how long a client may take to send its request, how long a
 * connection may sit idle, how large the request line and headers may be, how many connections
 * the process holds, and the default body limit of every route. Fastify disables Node's request
 * timeout and keeps idle keep-alive connections for 72 s unless told otherwise, so a client that
 * sent its body slowly, or never, held its socket for ever. Each limit, and why the idle timeout
 * stays above the longest long poll: docs/configuration.md "Limits" and "Timeouts and long polls".
 *
 * Node writes its own plain answers to requests it refuses before Fastify sees them (timeouts,
 * headers too large, malformed requests); `clientErrorHandler` answers them as problem documents.
 */
import { type Server, STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyHttpOptions } from 'fastify';
import type { Api } from './api.js';
import type { Config } from '../config.js';
import { formatBytes, problemJson, sendProblem } from './problem.js';
import { redactUrl } from './redact-url.js';
import { type ThrottledLog, type TroubleKind, throttledLog } from './throttled-log.js';
import type { Logger } from 'pino';
import { own } from '../own-keys.js';

/** The body limit of every route that does not set its own. */
const API_BODY_LIMIT = 1024 * 1024;

/** How long a shutdown waits for the requests in flight before it closes their connections. */
const SHUTDOWN_GRACE_MS = 10_000;
/** When a request refused during shutdown may come again: to another process, or this one restarted. */
const CLOSING_RETRY_AFTER_SECONDS = 5;

const ms = (seconds: number) => Math.round(seconds * 1000);

/**
 * Sockets the server cut itself, so that their end is not taken for the client's abort: `answered`
 * by the clientError handler (and logged there), or `idle` (nothing moved for the idle timeout).
 */
const cutByServer = new WeakMap<Socket, 'answered' | 'idle'>();

/** Fastify's server options for the listener; `log` is the server's logger. */
export function listenerOptions(config: Config, log: Logger) {
  const headersTimeout = ms(config.HTTP_HEADERS_TIMEOUT_SECONDS);
  const requestTimeout = ms(config.HTTP_REQUEST_TIMEOUT_SECONDS);
  return {
    bodyLimit: API_BODY_LIMIT,
    requestTimeout,
    connectionTimeout: ms(config.HTTP_IDLE_TIMEOUT_SECONDS),
    keepAliveTimeout: ms(config.HTTP_KEEP_ALIVE_TIMEOUT_SECONDS),
    http: {
      headersTimeout,
      requestTimeout,
      maxHeaderSize: config.HTTP_MAX_HEADER_BYTES,
      // How often Node looks for expired requests (its default, 30 s, would let a 10 s timeout run 40 s).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 4))),
    },
    clientErrorHandler: clientErrorHandler(config, throttledLog(log)),
    // Fastify's own 503 while closing is no problem document: `refuseWhileClosing` answers instead.
    return503OnClosing: false,
  } satisfies FastifyHttpOptions<Server>;
}

interface ConnectionError extends Error {
  code?: string;
}

function clientErrorHandler(config: Config, trouble: ThrottledLog) {
  const refusals: Record<string, [number, string, string, string, TroubleKind]> = {
    ERR_HTTP_REQUEST_TIMEOUT: [
      408,
      'request_timeout',
      'Request timeout',
      `the request line and headers must arrive within ${config.HTTP_HEADERS_TIMEOUT_SECONDS} s, and the whole request within ${config.HTTP_REQUEST_TIMEOUT_SECONDS} s`,
      'request_timeout',
    ],
    HPE_HEADER_OVERFLOW: [
      431,
      'headers_too_large',
      'Request header fields too large',
      `the request line and headers are at most ${formatBytes(config.HTTP_MAX_HEADER_BYTES)} together`,
      'headers_too_large',
    ],
  };
  return (error: ConnectionError, socket: Socket): void => {
    // The client is gone (it reset or closed the connection mid-request): nothing to answer. Had it
    // begun a body, the request's abort is noted by the hook below.
    if (error.code === 'ECONNRESET' || error.code === 'HPE_INVALID_EOF_STATE' || socket.destroyed) {
      socket.destroy();
      return;
    }
    const [status, code, title, detail, kind] = own(refusals, error.code ?? '') ?? [
      400,
      'malformed_request',
      'Malformed request',
      `the request is not valid HTTP/1.1 (${error.code ?? error.message})`,
      'malformed_request',
    ];
    cutByServer.set(socket, 'answered');
    trouble.note(kind, { remote: socket.remoteAddress, error: error.code });
    // A request Fastify is handling (a body arriving too slowly) has its response on the socket.
    const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (socket.writable && !res?.headersSent) {
      // Refused before its request line was read, a request has no path to name.
      const instance = res?.req?.url ? redactUrl(res.req.url) : '';
      const body = problemJson(status, code, title, detail, instance);
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}

/**
 * What the listener watches once the app exists: the cap on connections, and bodies whose
 * client went away before sending them all. Each is one throttled log line, never one per event.
 */
export function watchClients(app: Api, config: Config, log: Logger): void {
  const trouble = throttledLog(log);
  app.server.maxConnections = config.HTTP_MAX_CONNECTIONS;
  app.server.on('drop', (data) => trouble.note('connection_refused', { remote: data?.remoteAddress }));
  // Node stops enforcing the timeouts once the server is closing, so a body still trickling in would
  // hold a shutdown for ever: what has not finished within the grace is cut off.
  let graceOver = false;
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    const cut = setTimeout(() => {
      graceOver = true;
      log.warn(
        `shutting down: closing the connections of requests still in flight after ${SHUTDOWN_GRACE_MS / 1000} s`,
      );
      app.server.closeAllConnections();
    }, SHUTDOWN_GRACE_MS).unref();
    app.server.once('close', () => clearTimeout(cut));
    done();
  });
  refuseWhileClosing(app, () => closing);
  // The idle timeout (and the keep-alive one) closes the socket as Node would, but says so first.
  app.server.on('timeout', (socket: Socket) => {
    cutByServer.set(socket, 'idle');
    socket.destroy();
  });
  app.addHook('onRequestAbort', (req, done) => {
    const cut = cutByServer.get(req.raw.socket);
    const what = { method: req.method, url: redactUrl(req.url) };
    // A request in flight on which nothing moved for HTTP_IDLE_TIMEOUT_SECONDS: a stalled body, a hung handler.
    if (cut === 'idle') trouble.note('idle_timeout', what);
    // A client that hangs up after sending its whole request (a worker ending a long poll) aborted no body.
    else if (cut === undefined && !graceOver && !req.raw.complete) trouble.note('body_aborted', what);
    done();
  });
}

/**
 * A request that arrives once the server is closing (on a connection it already had: it accepts
 * no new ones) is answered 503 `shutting_down` with `Retry-After`, before its body is read, and its
 * connection closed; the requests in flight before are answered as usual.
 */
function refuseWhileClosing(app: Api, closing: () => boolean): void {
  app.addHook('onRequest', async (_req, reply) => {
    if (!closing()) return;
    reply.header('retry-after', String(CLOSING_RETRY_AFTER_SECONDS)).header('connection', 'close');
    return sendProblem(
      reply,
      503,
      'shutting_down',
      'Service unavailable',
      `the server is shutting down; try again in ${CLOSING_RETRY_AFTER_SECONDS} s`,
      undefined,
      true,
    );
  });
}
