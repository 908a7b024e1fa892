/**
 * The query of GET /agent/runs: its parameters, the filter they make, and the sort each `sort_by`
 * pages under. `metadata[key]=value` pairs arrive as literal parameter names (`metadata[ticket_id]`).
 */
import { z } from 'zod';
import { RUN_SOURCES, RUN_STATES } from '../../commands/run/events.js';
import { InvalidRequest } from '../../src/kernel/errors.js';
import { dateTimeParam, limitParam, repeatable, sortOrderParam, uidParam } from '../../src/http/schemas.js';
import type { Filter, Sort } from '../../src/readstore/port.js';

const MAX_METADATA_FILTERS = 5;
const EMPTY_ENVIRONMENT = 'empty-environment';

const METADATA_PARAM = /^metadata\[(.*)\]$/;
const METADATA_KEY = /^[a-zA-Z0-9._-]{1,64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `IN_PROGRESS` is how the hosted service sometimes spells `INPROGRESS`. */
const stateParam = z.enum([...RUN_STATES, 'IN_PROGRESS']).transform((s) => (s === 'IN_PROGRESS' ? 'INPROGRESS' : s));

const text = z.string().min(1).max(1000);

export const listRunsQuery = z.looseObject({
  limit: limitParam(500, 20),
  cursor: z.string().max(2000).optional(),
  sort_by: z.enum(['updated_at', 'created_at', 'title', 'agent']).default('updated_at'),
  sort_order: sortOrderParam,
  state: repeatable(stateParam),
  task_status: repeatable(z.enum(['running', 'failed', 'blocked', 'cancelled', 'complete'])),
  name: text.optional(),
  model_id: text.optional(),
  creator: uidParam.optional(),
  executor: uidParam.optional(),
  source: repeatable(z.enum(RUN_SOURCES)),
  execution_location: z.enum(['LOCAL', 'REMOTE']).optional(),
  created_after: dateTimeParam.optional(),
  created_before: dateTimeParam.optional(),
  updated_after: dateTimeParam.optional(),
  environment_id: z
    .string()
    .max(22)
    .refine(
      (v) => v === EMPTY_ENVIRONMENT || /^[A-Za-z0-9]{22}$/.test(v),
      `an environment ID is 22 characters [A-Za-z0-9], or ${EMPTY_ENVIRONMENT}`,
    )
    .optional(),
  skill: text.optional(),
  skill_spec: text.optional(),
  schedule_id: uidParam.optional(),
  factory_uid: repeatable(uidParam),
  ancestor_run_id: uidParam.optional(),
  artifact_type: z.enum(['PLAN', 'PULL_REQUEST', 'SCREENSHOT', 'FILE', 'EXTERNAL_REFERENCE']).optional(),
  q: z.string().min(1).max(2048).optional(),
  automation_id: z.string().min(1).max(256).optional(),
});

export type ListRunsQuery = z.infer<typeof listRunsQuery>;

const invalid = (param: string, message: string) =>
  new InvalidRequest(message, [{ path: `querystring.${param}`, message }]);

/**
 * The `metadata[key]=value` pairs of the query, checked; any other parameter the schema does not
 * name is refused too, so a misspelt filter never silently lists everything.
 */
export function metadataPairs(query: Record<string, unknown>): Array<[string, string]> {
  const known = new Set(Object.keys(listRunsQuery.shape));
  const pairs: Array<[string, string]> = [];
  for (const [param, value] of Object.entries(query)) {
    if (known.has(param)) continue;
    const key = METADATA_PARAM.exec(param)?.[1];
    if (key === undefined) throw invalid(param, `unknown query parameter ${param}`);
    if (!METADATA_KEY.test(key)) throw invalid(param, 'metadata keys are 1-64 characters of [a-zA-Z0-9._-]');
    if (typeof value !== 'string') throw invalid(param, 'give each metadata key once');
    // No stored value is longer (metadata values are at most 256 bytes).
    if (value.length > 256) throw invalid(param, 'metadata values are at most 256 bytes');
    pairs.push([key, value]);
  }
  if (pairs.length > MAX_METADATA_FILTERS)
    throw invalid('metadata', `filter on at most ${MAX_METADATA_FILTERS} metadata pairs`);
  return pairs;
}

/**
 * The run a search text names exactly: a run id (a UUID), or a run URL under the public base
 * URL, `<base>/runs/<id>` or the API's own `<base>/api/v1/agent/runs/<id>` (a trailing slash,
 * query or fragment is ignored). Anything else is searched for as text.
 */
function runNamedBy(q: string, baseUrl: string): string | null {
  const text = q.trim();
  if (UUID.test(text)) return text;
  if (!text.startsWith(`${baseUrl}/`)) return null;
  const path = text.slice(baseUrl.length).split(/[?#]/)[0]!.replace(/\/$/, '');
  const id = /^\/(?:api\/v1\/agent\/)?runs\/([^/]+)$/.exec(path)?.[1];
  return id === undefined ? null : decodeURIComponent(id);
}

const utc = (at: string | undefined) => (at === undefined ? undefined : new Date(at).toISOString());

export interface ListScope {
  /**
   * Which runs the caller may list at all, as filters any of which admits a run: each is read
   * from an index of its own and the pages merged (see `findMerged`).
   */
  visible: readonly Filter[];
  /** The requested factories the caller may see (undefined: no factory filter). */
  factories: string[] | undefined;
  metadata: Array<[string, string]>;
  baseUrl: string;
}

/**
 * The filters of one list request, one per way the caller may see a run (its team's runs, its
 * personal runs, for an agent the runs its team executes): a run matching any is listed.
 */
export function runsFilters(q: ListRunsQuery, scope: ListScope): Filter[] {
  const rest = runsFilter(q, scope);
  return scope.visible.map((visible) => ({ $and: [visible, rest] }));
}

function runsFilter(q: ListRunsQuery, scope: ListScope): Filter {
  if (q.skill && q.skill_spec && q.skill !== q.skill_spec)
    throw invalid('skill', 'skill and skill_spec name the same filter; give one');
  const named = q.q === undefined ? null : runNamedBy(q.q, scope.baseUrl);
  const pairs = [...scope.metadata, ...(q.automation_id ? [['automation_id', q.automation_id] as const] : [])];
  const created = {
    ...(q.created_after ? { $gt: utc(q.created_after) } : {}),
    ...(q.created_before ? { $lt: utc(q.created_before) } : {}),
  };
  return {
    $and: [
      {
        state: q.state && { $in: q.state },
        task_status: q.task_status && { $in: q.task_status },
        agent_name: q.name,
        model_id: q.model_id,
        'creator.uid': q.creator,
        'executor.uid': q.executor,
        source: q.source && { $in: q.source },
        execution_location: q.execution_location,
        created_at: Object.keys(created).length ? created : undefined,
        updated_at: q.updated_after && { $gt: utc(q.updated_after) },
        environment_id: q.environment_id === EMPTY_ENVIRONMENT ? null : q.environment_id,
        skill_spec: q.skill ?? q.skill_spec,
        schedule_id: q.schedule_id,
        factory_uid: scope.factories && { $in: scope.factories },
        ancestors: q.ancestor_run_id && { $has: q.ancestor_run_id },
        artifact_types: q.artifact_type && { $has: q.artifact_type },
        run_id: named ?? undefined,
      },
      ...pairs.map(([key, value]) => ({ metadata_pairs: { $has: `${key}=${value}` } })),
      ...(q.q !== undefined && named === null
        ? [{ $or: [{ title: { $contains: q.q } }, { prompt: { $contains: q.q } }, { skill_spec: { $contains: q.q } }] }]
        : []),
    ],
  };
}

/**
 * The keyset sort of each `sort_by`, ending with the run id. Titles and agent names sort without
 * regard to case; runs without an agent name come last in either order: ascending they sort on
 * `agent_missing` = 1 first, descending their `agent_key` '' sorts last of all. Every key of a
 * sort runs in one direction, so one index (runs projection) yields it in order.
 */
export function runsSort(sortBy: ListRunsQuery['sort_by'], order: ListRunsQuery['sort_order']): Sort {
  switch (sortBy) {
    case 'updated_at':
    case 'created_at':
      return [
        [sortBy, order],
        ['id', order],
      ];
    case 'title':
      return [
        ['title_key', order],
        ['id', order],
      ];
    case 'agent':
      return order === 'asc'
        ? [
            ['agent_missing', 'asc'],
            ['agent_key', 'asc'],
            ['id', 'asc'],
          ]
        : [
            ['agent_key', 'desc'],
            ['id', 'desc'],
          ];
  }
}
