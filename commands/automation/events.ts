/**
 * Automations: what starts factory runs. The automations of one factory share one stream
 * (`automations-<factory_uid>`), so that the reactor reads every automation of a factory, as it
 * stands, from one stream on each delivery, and the per-factory limit is decided on one revision.
 * A replay of a delivery is its own stream (`replay-<replay_id>`): its event is what the runs it
 * starts derive their ids from, so each replay starts runs once.
 */
import { v5 as uuidv5 } from 'uuid';
import type { DeliveryAccepted } from '../webhook/events.js';

/** A trigger as stored: the validated request (webhook_ids normalised to a list of one uid). */
export interface Trigger {
  provider: string;
  event: string;
  filter: Record<string, unknown> | null;
  schedule?: { name?: string; cron: string };
}

export interface AutomationFields {
  name: string;
  prompt: string;
  /** An agent identity uid of the factory's team, or null. */
  agent: string | null;
  enabled: boolean;
  triggers: Trigger[];
  /** Run settings its runs start with (an automation file's execution overrides); absent: the agent's. */
  config?: Record<string, unknown> | null;
  /** Its runs wait for a team admin's approval before they begin (guardrails); absent: false. */
  requires_approval?: boolean;
}

export type AutomationEvent =
  | { type: 'AutomationCreated'; data: AutomationFields & { id: string; factory_uid: string; team_uid: string } }
  | { type: 'AutomationUpdated'; data: { id: string; factory_uid: string; changes: Partial<AutomationFields> } }
  | { type: 'AutomationDeleted'; data: { id: string; factory_uid: string } };

/** A user asked to evaluate an accepted delivery again against the automations of today. */
export type DeliveryReplayed = {
  type: 'DeliveryReplayed';
  data: DeliveryAccepted['data'] & { replay_id: string };
};

/** What fired an automation: a delivery (or a replay of one), or a schedule's firing. */
export type AutomationFiring =
  | { delivery: { webhook_uid: string; delivery_id: string; replay_id?: string } }
  | { schedule: { schedule_id: string; due_at: string } };

/**
 * An automation's run could not start (a budget with no room, a model disabled): the run does not
 * exist, this says why. One per run id, on `automationrefusal-<run_id>`, so a replayed reaction
 * records it once, and starts no run later that was refused once.
 */
export type AutomationRunRefused = {
  type: 'AutomationRunRefused';
  data: AutomationFiring & {
    run_id: string;
    automation_id: string;
    automation_name: string;
    factory_uid: string;
    team_uid: string;
    /** The problem's status, `code` and `detail`, as the API would have answered them. */
    status: number;
    code: string;
    detail: string;
  };
};

export const automationsStream = (factoryUid: string) => `automations-${factoryUid}`;
export const replayStream = (replayId: string) => `replay-${replayId}`;
export const automationRefusalStream = (runId: string) => `automationrefusal-${runId}`;

/** The webhook a trigger listens to, or null for a trigger of another provider. */
export const webhookOf = (t: Trigger): string | null =>
  t.provider === 'webhook' ? ((t.filter?.webhook_ids as string[] | undefined)?.[0] ?? null) : null;

const INLINE_SCHEDULES = '8f3c2d1e-5b6a-4c7d-9e8f-0a1b2c3d4e5f';

/** An inline schedule's id: named by its automation and its `name` (renaming it makes another schedule). */
export const inlineScheduleId = (automationId: string, name: string | undefined) =>
  uuidv5(`${automationId}:${name ?? ''}`, INLINE_SCHEDULES);

/** The schedules a `schedule/cron_fired` trigger fires on: its inline schedule, or `filter.schedule_ids`. */
export function scheduleIdsOf(automationId: string, t: Trigger): string[] {
  if (t.provider !== 'schedule') return [];
  if (t.schedule) return [inlineScheduleId(automationId, t.schedule.name)];
  const ids = t.filter?.schedule_ids;
  const list = Array.isArray(ids) ? ids : ((ids as { in?: unknown[] } | undefined)?.in ?? []);
  return list.filter((id): id is string => typeof id === 'string');
}
