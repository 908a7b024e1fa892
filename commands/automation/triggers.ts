/**
 * Trigger validation (reference notes §5): each provider's events and filter keys, snake_case
 * only; a matcher is a bare list (same as `{in}`) or `{in, not_in}` with no value in both;
 * `webhook_ids` and `schedule_ids` take `in` only; values are strings except `pr_numbers`.
 * Only webhook triggers fire here (the code-host and chat integrations are not part of this
 * service); the others are validated and stored so that definitions round-trip.
 */
import { z } from 'zod';
import { boundedJson } from '../../src/http/schemas.js';
import type { FieldError } from '../../src/kernel/errors.js';
import { cronProblem } from '../schedule/public.js';
import { validateFilter } from './filter.js';
import type { Trigger } from './events.js';
import { own } from '../../src/own-keys.js';

export const MAX_TRIGGERS = 20;
const MAX_MATCHER_VALUES = 100;
/**
 * A trigger's `filter` as JSON, checked before its rules are: 64 KB (its `payload` part has its own,
 * smaller limits, FILTER_LIMITS), nested at most 64 levels.
 */
const TRIGGER_FILTER_MAX_BYTES = 64 * 1024;

const GITHUB_PR = ['repos', 'base_branches', 'pr_numbers', 'paths', 'assignees', 'authors', 'labels'];
const LINEAR_ISSUE = [
  'team_ids',
  'project_ids',
  'labels',
  'state_ids',
  'assignee_ids',
  'mentioned_user_ids',
  'creator_ids',
];
const SLACK_MESSAGE = ['channel_ids', 'user_ids', 'keywords'];

/** provider -> event -> the filter keys it takes. */
const CATALOGUE: Record<string, Record<string, readonly string[]>> = {
  github: {
    push: ['repos', 'branches', 'paths'],
    issue_created: ['repos', 'labels', 'assignees', 'authors'],
    issue_labeled: ['repos', 'labels', 'assignees', 'authors'],
    ...Object.fromEntries(
      ['opened', 'ready', 'closed', 'merged', 'labeled', 'synchronized', 'reopened'].map((e) => [
        `pull_request_${e}`,
        GITHUB_PR,
      ]),
    ),
    issue_mentioned: ['repos', 'mentioned', 'labels'],
    pull_request_mentioned: ['repos', 'mentioned', 'labels'],
    issue_assigned: ['repos', 'assignees', 'labels'],
    pull_request_assigned: ['repos', 'assignees', 'labels'],
    pull_request_review_requested: ['repos', 'reviewers', 'reviewer_teams'],
    pull_request_review_submitted: ['repos', 'mentioned', 'labels', 'review_states'],
    check_suite_completed: ['repos', 'conclusions', 'branches', 'labels', 'authors'],
    workflow_run_completed: ['repos', 'conclusions', 'branches', 'workflows', 'labels', 'authors'],
    check_run_rerequested: ['repos'],
    check_suite_rerequested: ['repos'],
  },
  gitlab: { merge_request: ['repos', 'actions', 'base_branches'], bot_mentioned: ['repos'] },
  linear: {
    issue_created: LINEAR_ISSUE,
    issue_labeled: LINEAR_ISSUE,
    issue_state_changed: LINEAR_ISSUE,
    issue_assigned: LINEAR_ISSUE,
    comment_created: [...LINEAR_ISSUE, 'issue_ids'],
    agent_session_created: ['team_ids', 'creator_ids', 'keywords'],
  },
  jira: {
    issue_created: ['project_keys', 'labels'],
    issue_labeled: ['project_keys', 'labels'],
    status_changed: ['project_keys', 'status_ids'],
    agent_session_created: ['project_keys', 'labels', 'keywords'],
  },
  slack: {
    app_mention: SLACK_MESSAGE,
    message_dm: SLACK_MESSAGE,
    message_im: SLACK_MESSAGE,
    message_mpim: SLACK_MESSAGE,
    message_posted: SLACK_MESSAGE,
    reaction_added: ['channel_ids', 'user_ids', 'emojis', 'keywords', 'item_user_ids'],
    member_joined_channel: ['channel_ids', 'user_ids'],
  },
  schedule: { cron_fired: ['schedule_ids'] },
  factory: { work_item_stage_changed: ['stages'] },
  webhook: { received: ['webhook_ids', 'payload'] },
};

const IN_ONLY = new Set(['webhook_ids', 'schedule_ids']);

/** The request shape; the rules of each provider are checked by `triggerErrors`. */
export const triggerSchema = z
  .object({
    provider: z.string().min(1).max(50),
    event: z.string().min(1).max(100),
    filter: boundedJson({ maxBytes: TRIGGER_FILTER_MAX_BYTES }, z.record(z.string(), z.unknown()))
      .nullable()
      .optional(),
    schedule: z
      .object({ name: z.string().trim().min(1).max(200).optional(), cron: z.string().min(1).max(200) })
      .strict()
      .optional(),
  })
  .strict();

export type TriggerRequest = z.infer<typeof triggerSchema>;

function matcherErrors(value: unknown, key: string, at: string): FieldError[] {
  const errors: FieldError[] = [];
  if (value === null) return errors;
  const typeOk = (v: unknown) =>
    key === 'pr_numbers' ? Number.isInteger(v) : typeof v === 'string' && v.length > 0 && v.length <= 1024;
  const list = (v: unknown, path: string) => {
    if (!Array.isArray(v)) return errors.push({ path, message: 'a list of values' });
    if (v.length > MAX_MATCHER_VALUES) errors.push({ path, message: `at most ${MAX_MATCHER_VALUES} values` });
    v.forEach((x, i) => {
      if (!typeOk(x))
        errors.push({ path: `${path}.${i}`, message: key === 'pr_numbers' ? 'an integer' : 'a non-empty string' });
    });
  };
  if (Array.isArray(value)) list(value, at);
  else if (typeof value === 'object') {
    const ops = value as Record<string, unknown>;
    for (const op of Object.keys(ops)) {
      const allowed = IN_ONLY.has(key) ? ['in'] : ['in', 'not_in'];
      if (!allowed.includes(op))
        errors.push({ path: `${at}.${op}`, message: `${key} takes ${allowed.join(' and ')} only` });
    }
    if ('in' in ops) list(ops.in, `${at}.in`);
    if ('not_in' in ops) list(ops.not_in, `${at}.not_in`);
    if (
      Array.isArray(ops.in) &&
      Array.isArray(ops.not_in) &&
      ops.in.some((v) => (ops.not_in as unknown[]).includes(v))
    ) {
      errors.push({ path: at, message: 'a value is listed in both in and not_in' });
    }
  } else errors.push({ path: at, message: 'a list of values, or {in, not_in}' });
  return errors;
}

const webhookIdsOf = (value: unknown): unknown[] | null =>
  Array.isArray(value)
    ? value
    : value && typeof value === 'object' && Array.isArray((value as { in?: unknown }).in)
      ? (value as { in: unknown[] }).in
      : null;

/** Every problem of one trigger, with paths under `at` (such as `body.triggers[0]`). */
function oneTriggerErrors(t: TriggerRequest, at: string): FieldError[] {
  const events = own(CATALOGUE, t.provider);
  if (!events) return [{ path: `${at}.provider`, message: `one of ${Object.keys(CATALOGUE).join(', ')}` }];
  const keys = own(events, t.event);
  if (!keys)
    return [
      { path: `${at}.event`, message: `a ${t.provider} trigger's event is one of ${Object.keys(events).join(', ')}` },
    ];
  const errors: FieldError[] = [];
  const filter = t.filter ?? {};
  for (const [key, value] of Object.entries(filter)) {
    const path = `${at}.filter.${key}`;
    if (!keys.includes(key))
      errors.push({ path, message: `not a filter key of ${t.provider}/${t.event} (${keys.join(', ')})` });
    else if (key === 'payload') {
      if (value !== null && !(typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0))
        errors.push(...validateFilter(value, path));
    } else errors.push(...matcherErrors(value, key, path));
  }
  if (t.schedule && t.provider !== 'schedule')
    errors.push({ path: `${at}.schedule`, message: 'only schedule/cron_fired triggers take a schedule' });
  if (t.provider === 'schedule') {
    const ids = webhookIdsOf(filter.schedule_ids);
    if (!t.schedule === !ids?.length)
      errors.push({ path: at, message: 'give exactly one of schedule or filter.schedule_ids' });
    const problem = t.schedule ? cronProblem(t.schedule.cron) : null;
    if (problem) errors.push({ path: `${at}.schedule.cron`, message: problem });
  }
  if (t.provider === 'webhook') {
    const ids = webhookIdsOf(filter.webhook_ids);
    if (ids?.length !== 1)
      errors.push({
        path: `${at}.filter.webhook_ids`,
        message: 'a list of exactly one webhook UID; add one trigger per webhook',
      });
  }
  return errors;
}

/** Every problem of a list of triggers (at least one, at most MAX_TRIGGERS). */
export function triggerErrors(triggers: readonly TriggerRequest[], at = 'body.triggers'): FieldError[] {
  if (triggers.length === 0) return [{ path: at, message: 'an automation has at least one trigger' }];
  if (triggers.length > MAX_TRIGGERS) return [{ path: at, message: `at most ${MAX_TRIGGERS} triggers` }];
  const errors = triggers.flatMap((t, i) => oneTriggerErrors(t, `${at}.${i}`));
  if (triggers.filter((t) => t.schedule && !t.schedule.name).length > 1)
    errors.push({ path: at, message: 'at most one unnamed inline schedule per automation' });
  return errors;
}

/** The stored form: a webhook trigger's `webhook_ids` becomes a list of its one uid. */
export function normalizeTrigger(t: TriggerRequest): Trigger {
  const filter = t.filter && Object.keys(t.filter).length ? { ...t.filter } : null;
  if (t.provider === 'webhook' && filter) filter.webhook_ids = webhookIdsOf(filter.webhook_ids);
  return { provider: t.provider, event: t.event, filter, ...(t.schedule ? { schedule: t.schedule } : {}) };
}
