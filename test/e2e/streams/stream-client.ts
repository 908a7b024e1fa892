/**
 * Event-stream clients for the e2e tests: the `eventsource` package (a real EventSource, as a
 * client would use it: it reconnects with Last-Event-ID), collecting what it receives, and JSON
 * calls to the API. Every payload received is checked strictly against its type's schema in the
 * server's own OpenAPI document.
 */
import { EventSource } from 'eventsource';
import type { ServerProcess } from '../server-process.js';
import { sleep } from '../server-process.js';

export interface Received {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

export interface Listener {
  source: EventSource;
  events: Received[];
  /** Errors and reconnections, as the client saw them. */
  errors: Array<{ code?: number; message?: string }>;
  /** Resolves once `n` events arrived (bounded wait). */
  count(n: number, ms?: number): Promise<Received[]>;
  close(): void;
}

/** An EventSource on `url` of `server` with `key`; `types` lists the event names to listen for. */
export function listen(
  server: ServerProcess,
  url: string,
  types: readonly string[],
  o: { key?: string; headers?: Record<string, string> } = {},
): Listener {
  const key = o.key ?? server.apiKey!;
  const source = new EventSource(`${server.baseUrl}/api/v1${url}`, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...init?.headers, ...o.headers, authorization: `Bearer ${key}` } }),
  });
  const events: Received[] = [];
  const errors: Listener['errors'] = [];
  for (const type of types)
    source.addEventListener(type, (e) => events.push({ id: e.lastEventId, type, data: JSON.parse(e.data) }));
  source.addEventListener('error', (e) => errors.push({ code: e.code, message: e.message }));
  return {
    source,
    events,
    errors,
    async count(n, ms = 20_000) {
      await until(`${n} events on ${url}`, async () => events.length >= n, ms);
      return events.slice(0, n);
    },
    close: () => source.close(),
  };
}

export async function until<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  ms = 20_000,
): Promise<T> {
  for (const deadline = Date.now() + ms; ; await sleep(25)) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen in ${ms} ms`);
  }
}

/** One JSON request to `server`, as `key` (the admin's by default), acting for `team` when given. */
export async function call(
  server: ServerProcess,
  method: string,
  url: string,
  o: { body?: unknown; key?: string; team?: string; headers?: Record<string, string> } = {},
) {
  const res = await fetch(`${server.baseUrl}/api/v1${url}`, {
    method,
    headers: {
      authorization: `Bearer ${o.key ?? server.apiKey}`,
      ...(o.team ? { 'x-service-team-uid': o.team } : {}),
      ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...o.headers,
    },
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}
