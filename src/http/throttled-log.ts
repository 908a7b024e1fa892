/**
 * Log lines about what clients do to the server (timed-out and aborted requests, refused
 * connections, shed load), at most one a second per kind: a flood of them must not flood the log.
 * The first event of a kind is logged at once; the ones that follow within the second are counted
 * and logged as one line when the second is over. Each line says how many events it stands for
 * (`count`), so the counts of one kind add up to every event of that kind.
 *
 * Hand-written rather than a pino option: pino has no sampling or rate limit of its own.
 */
import type { Logger } from 'pino';

export type TroubleKind =
  | 'request_timeout'
  | 'headers_too_large'
  | 'malformed_request'
  | 'body_aborted'
  | 'idle_timeout'
  | 'connection_refused'
  | 'load_shed'
  | 'ingress_busy'
  | 'ingress_counted';

const MESSAGES: Record<TroubleKind, string> = {
  request_timeout: 'a request did not arrive in time and was answered 408',
  headers_too_large: 'a request line or headers too large was answered 431',
  malformed_request: 'a malformed request was answered 400',
  body_aborted: 'a client closed its connection before its request body arrived',
  idle_timeout: 'a connection with a request in flight was idle for HTTP_IDLE_TIMEOUT_SECONDS and was closed',
  connection_refused: 'a connection was closed at once: the server holds HTTP_MAX_CONNECTIONS',
  load_shed: 'the server is overloaded and answered 503',
  ingress_busy: 'the webhook ingress reads as many unauthenticated bodies as it may and answered 503',
  ingress_counted:
    'webhook deliveries of senders not authenticated were refused past the failed-authentication budget; the delivery log counts them',
};

const THROTTLE_WINDOW_MS = 1000;

export interface ThrottledLog {
  /** One event of `kind`; `fields` describe it, and are logged when this event gets a line of its own. */
  note(kind: TroubleKind, fields?: Record<string, unknown>): void;
  /**
   * A request refused by a protection (load shedding, the ingress bound): counted here instead of
   * having its own request line, so that a flood of them writes a line a second, not one each.
   */
  refused(kind: TroubleKind, req: object, fields?: Record<string, unknown>): void;
}

const countedInstead = new WeakSet<object>();

/** Whether this request was counted in a throttled line instead of its own request line. */
export const countedInsteadOfLogged = (req: object): boolean => countedInstead.has(req);

const byLogger = new WeakMap<Logger, ThrottledLog>();

/** The throttled log of this logger: one per logger, so every part of one server shares its windows. */
export function throttledLog(log: Logger): ThrottledLog {
  let throttled = byLogger.get(log);
  if (!throttled) byLogger.set(log, (throttled = createThrottledLog(log)));
  return throttled;
}

function createThrottledLog(log: Logger): ThrottledLog {
  /** Kinds inside their window: the events counted since the last line. */
  const open = new Map<TroubleKind, number>();

  const closeWindow = (kind: TroubleKind) => {
    const count = open.get(kind) ?? 0;
    if (count === 0) {
      open.delete(kind);
      return;
    }
    log.warn({ kind, count }, MESSAGES[kind]);
    open.set(kind, 0);
    // Another window: a steady flood gets one line a second.
    setTimeout(closeWindow, THROTTLE_WINDOW_MS, kind).unref();
  };

  const throttled: ThrottledLog = {
    refused(kind, req, fields) {
      countedInstead.add(req);
      throttled.note(kind, fields);
    },
    note(kind, fields = {}) {
      const counted = open.get(kind);
      if (counted !== undefined) {
        open.set(kind, counted + 1);
        return;
      }
      log.warn({ kind, count: 1, ...fields }, MESSAGES[kind]);
      open.set(kind, 0);
      setTimeout(closeWindow, THROTTLE_WINDOW_MS, kind).unref();
    },
  };
  return throttled;
}
