/**
 * Event-stream clients for the e2e tests: the `eventsource` package (a real EventSource, as a
 * client would use it: it reconnects with Last-Event-ID), collecting what it receives, and JSON
 * calls to the API. Every payload received is checked strictly against its type's schema in the
 * server's own OpenAPI document.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { EventSource } from 'eventsource';
import { type ServerProcess, until } from '../server-process.js';

export interface Received {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

export interface Listener {
  source: EventSource;
  events: Received[];
  /** Payloads that failed their documented schema. */
  invalid: string[];
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
  o: { key?: string; cookie?: string; headers?: Record<string, string>; check?: (e: Received) => void } = {},
): Listener {
  // A browser's EventSource sends its cookie and no header of ours: `cookie` stands for that.
  const credential: Record<string, string> = o.cookie
    ? { cookie: o.cookie }
    : { authorization: `Bearer ${o.key ?? server.apiKey!}` };
  const source = new EventSource(`${server.baseUrl}/api/v1${url}`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, ...o.headers, ...credential } }),
  });
  const events: Received[] = [];
  const errors: Listener['errors'] = [];
  const invalid: string[] = [];
  for (const type of types)
    source.addEventListener(type, (e) => {
      const got = { id: e.lastEventId, type, data: JSON.parse(e.data) };
      try {
        o.check?.(got);
      } catch (error) {
        invalid.push((error as Error).message);
      }
      events.push(got);
    });
  source.addEventListener('error', (e) => errors.push({ code: e.code, message: e.message }));
  return {
    source,
    events,
    errors,
    invalid,
    async count(n, ms = 20_000) {
      await until(`${n} events on ${url}`, async () => events.length >= n, ms);
      return events.slice(0, n);
    },
    close: () => source.close(),
  };
}

/**
 * Checks every payload received against the schema the OpenAPI document gives its type on `path`
 * (strictly: a field it does not declare fails), and that the type is one it documents.
 */
export async function payloadChecker(server: ServerProcess, path: string) {
  const res = await fetch(`${server.baseUrl}/api/v1/openapi.json`);
  const doc = (await res.json()) as {
    paths?: Record<string, { get: { responses: Record<string, { content?: Record<string, { schema: unknown }> }> } }>;
  };
  if (!doc.paths) throw new Error(`no OpenAPI document (${res.status}): ${JSON.stringify(doc)}`);
  const content = doc.paths[path]?.get.responses['200']?.content?.['text/event-stream'];
  if (!content) throw new Error(`${path} documents no text/event-stream answer`);
  const ajv = new Ajv({ strict: false, allErrors: true });
  const byType = new Map<string, ValidateFunction>();
  type Option = { properties: { event: { enum: [string] }; data: object } };
  for (const option of (content.schema as { oneOf: Option[] }).oneOf)
    byType.set(option.properties.event.enum[0], ajv.compile(strictly(option.properties.data) as object));
  return (e: Received) => {
    const check = byType.get(e.type);
    if (!check) throw new Error(`${e.type} is not documented on ${path}`);
    if (!check(e.data))
      throw new Error(`${e.type} payload: ${ajv.errorsText(check.errors)} in ${JSON.stringify(e.data)}`);
  };
}

/** The schema with every object closed: a field it does not declare is an error. */
function strictly(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strictly);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, strictly(v)]));
  if (out.type === 'object' && out.properties && out.additionalProperties === undefined)
    out.additionalProperties = false;
  return out;
}
