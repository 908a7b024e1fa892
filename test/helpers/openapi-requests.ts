/**
 * Requests shaped like the OpenAPI document's own: every operation with its parameters and body
 * schema, bodies that mostly pass the schema (`plausible`), a valid example of each operation that
 * writes, and the places in a body where something else may be swapped in. Shared by the
 * request-driving property tests (test/api/fuzz-routes, test/api/projection-totality).
 */
import fc from 'fast-check';
import type { TestApp } from './app.js';

export type Schema = {
  $ref?: string;
  type?: string;
  format?: string;
  pattern?: string;
  enum?: unknown[];
  const?: unknown;
  nullable?: boolean;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};
type Parameter = { in: 'path' | 'query' | 'header'; name: string; required?: boolean; schema: Schema };
export type Operation = {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
};

export interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

export const openApiDoc = async (t: TestApp) => (await t.call('GET', '/openapi.json')).json() as OpenApiDoc;

/** Generators of values for the schemas of `doc` (its `$ref`s resolved). */
export function schemaArbitraries(doc: OpenApiDoc) {
  const resolve = (s: Schema): Schema => (s.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()!]!) : s);

  const aString = (s: Schema): fc.Arbitrary<string> => {
    if (s.format === 'date-time') return fc.constant('2024-05-17T09:00:00Z');
    if (s.format === 'uri') return fc.constant('https://example.com/acme/api/pull/1');
    if (s.format === 'email') return fc.constantFrom('a@example.com', 'b@example.org');
    if (s.pattern && s.pattern.length < 200)
      try {
        return fc.stringMatching(new RegExp(s.pattern), { size: 'xsmall' });
      } catch {
        // A pattern fast-check cannot generate from: any short string.
      }
    return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 20, 20) });
  };

  /** A value that mostly passes `schema` (small, of its type, its enums and patterns). */
  function plausible(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    const s = resolve(schema);
    const options = s.anyOf ?? s.oneOf ?? s.allOf;
    if (s.enum) return fc.constantFrom(...s.enum);
    if (s.const !== undefined) return fc.constant(s.const);
    if (options) return fc.oneof(...options.map((o) => plausible(o, depth)));
    if (depth > 4) return fc.constant(null);
    switch (s.type) {
      case 'string':
        return aString(s);
      case 'integer':
        return fc.integer({ min: Math.max(s.minimum ?? 0, -1e6), max: Math.min(s.maximum ?? 100, 1e6) });
      case 'number':
        return fc.double({ min: s.minimum ?? 0, max: Math.min(s.maximum ?? 100, 1e6), noNaN: true });
      case 'boolean':
        return fc.boolean();
      case 'array':
        return fc.array(plausible(s.items ?? {}, depth + 1), { maxLength: Math.min(s.maxItems ?? 3, 3) });
      case 'object': {
        const props = s.properties ?? {};
        if (!Object.keys(props).length)
          return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }));
        // The required fields and a few others: with every optional field, some one of them nearly always fails.
        const required = (s.required ?? []).filter((k) => k in props);
        const optional = Object.keys(props).filter((k) => !required.includes(k));
        return fc
          .subarray(optional, { maxLength: Math.min(2, optional.length) })
          .chain((chosen) =>
            fc.record(Object.fromEntries([...required, ...chosen].map((k) => [k, plausible(props[k]!, depth + 1)]))),
          );
      }
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  return { resolve, plausible };
}

export type Path = Array<string | number>;

/** Where in `value` something hostile may go: any of its nodes, or a new key or item beside them. */
export function targets(value: unknown, opaque: (v: object) => boolean = () => false): Path[] {
  const found: Path[] = [[]];
  const walk = (v: unknown, at: Path) => {
    if (found.length > 200 || !v || typeof v !== 'object' || opaque(v)) return;
    const entries: Array<[string | number, unknown]> = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    found.push([...at, Array.isArray(v) ? v.length : 'x']);
    for (const [k, x] of entries) {
      found.push([...at, k]);
      walk(x, [...at, k]);
    }
  };
  walk(value, []);
  return found;
}

/** `value` with `replacement` at `path`, making the objects and lists on the way. */
export function setAt(value: unknown, path: Path, replacement: unknown): unknown {
  if (!path.length) return replacement;
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const list = Array.isArray(value) ? [...value] : [];
    list[head] = setAt(list[head], rest, replacement);
    return list;
  }
  const object = value && typeof value === 'object' && !Array.isArray(value) ? { ...value } : {};
  (object as Record<string, unknown>)[head!] = setAt((object as Record<string, unknown>)[head!], rest, replacement);
  return object;
}

/** A valid request of each operation that writes, so that a swapped field is the request's only fault. */
export const examples: Record<string, unknown> = {
  'POST /api/v1/teams': { name: 'Team' },
  'POST /api/v1/teams/{team_uid}/members': { email: 'member@example.com', display_name: 'M', role: 'member' },
  'POST /api/v1/agent/identities': { name: 'A', memory: { notes: 'n' }, mcp_servers: { s: { url: 'https://m' } } },
  'PUT /api/v1/agent/identities/{agent_uid}': { description: 'd', harness: { type: 'claude' } },
  'POST /api/v1/teams/{team_uid}/secrets': { name: 'other_secret', value: 'v' },
  'POST /api/v1/factory': { name: 'F', repositories: [{ owner: 'acme', repo: 'api' }] },
  'PATCH /api/v1/factory/{factory_uid}': { description: 'd' },
  'POST /api/v1/agent/runs': { prompt: 'p', config: { name: 'n', extra: { a: [1] } }, metadata: { k: 'v' } },
  'POST /api/v1/agent/run': { prompt: 'p', config: { name: 'n' } },
  'POST /api/v1/agent/runs/{run_id}/followups': { message: 'm' },
  'POST /api/v1/agent/conversations/{conversation_id}/followups': { message: 'm' },
  'POST /api/v1/factory/{factory_uid}/tasks': { title: 't', conversation_id: 'c' },
  'PATCH /api/v1/factory/{factory_uid}/tasks/{task_uid}': { title: 't' },
  'POST /api/v1/factory/{factory_uid}/runs': { prompt: 'p', ticket_ref: 'linear:PAY-1' },
  'POST /api/v1/factory/{factory_uid}/webhooks': { name: 'W' },
  'PATCH /api/v1/factory/{factory_uid}/webhooks/{webhook_uid}': { name: 'W2' },
  'POST /api/v1/factory/{factory_uid}/automations': {
    name: 'A',
    prompt: 'p',
    triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: ['w'], payload: { a: ['b'] } } }],
  },
  'PATCH /api/v1/factory/{factory_uid}/automations/{automation_id}': { name: 'A2' },
  'POST /api/v1/agent/schedules': { name: 'S', prompt: 'p', cron_schedule: '0 9 * * 1', agent_config: { x: 1 } },
  'PUT /api/v1/agent/schedules/{schedule_id}': { name: 'S', prompt: 'p', cron_schedule: '0 9 * * 1' },
  'POST /api/v1/agent/workers': { host: 'h', capabilities: ['c'] },
  'POST /api/v1/agent/workers/{worker_id}/heartbeat': { runs: [], acks: [] },
  'POST /api/v1/agent/workers/{worker_id}/runs/{run_id}/timeline': { name: 'n', detail: { a: { b: [1] } } },
  'POST /api/v1/agent/workers/{worker_id}/runs/{run_id}/messages': {
    role: 'assistant',
    content: [
      { type: 'action', id: 'a', category: 'command', name: 'n', input: { cmd: 'ls' } },
      { type: 'action_result', action_id: 'a', category: 'command', name: 'n', state: 'completed', output: { ok: 1 } },
      { type: 'event', name: 'e', data: { d: 1 } },
    ],
  },
  'POST /api/v1/agent/workers/{worker_id}/runs/{run_id}/artifacts': {
    artifact_type: 'EXTERNAL_REFERENCE',
    reference_type: 'doc',
    url: 'https://x.dev',
    metadata: { k: 'v' },
  },
  'POST /api/v1/agent/workers/{worker_id}/runs/{run_id}/usage': {
    model_token_usage: [{ model_id: 'm', total_tokens: 1, tokens_by_category: { a: 1 } }],
  },
  'POST /api/v1/agent/workers/{worker_id}/runs/{run_id}/finish': { state: 'SUCCEEDED' },
  'POST /webhooks/w/{webhook_uid}': { action: 'opened', pr: { draft: false, labels: ['x'] } },
  'POST /webhooks/w/{webhook_uid}/{token}': { action: 'opened' },
};
