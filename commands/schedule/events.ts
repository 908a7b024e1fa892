/** A scheduled agent: `schedule-<id>`. Its firings are events of its own stream, once per due time. */
import type { RunMode } from '../run/events.js';
import { dueTimes } from './recurrence.js';

/** What a schedule starts, and when: exactly one of `cron_schedule` and `rrule`. */
export interface ScheduleFields {
  name: string;
  cron_schedule: string | null;
  rrule: string | null;
  prompt: string;
  enabled: boolean;
  agent_config: Record<string, unknown> | null;
  /** The agent identity that executes the runs (team schedules only). */
  agent_uid: string | null;
  metadata: Record<string, string>;
  mode: RunMode;
  /** Its runs wait for a team admin's approval before they begin (guardrails); absent: false. */
  requires_approval?: boolean;
}

/** An agent schedule starts runs; an automation's inline schedule starts that automation's runs. */
export type ScheduleOwner = { kind: 'agent' } | { kind: 'automation'; automation_id: string; factory_uid: string };

export type ScheduleCreatedData = ScheduleFields & {
  id: string;
  /** The owning team; null for a personal schedule. */
  team_uid: string | null;
  /** The team whose workers execute its runs (the active team at creation). */
  executing_team_uid: string;
  /** Who created it: its runs are started on their behalf. */
  owner: { type: 'user' | 'agent'; uid: string };
  for: ScheduleOwner;
  /** When the recurrence was set: `@every` counts its intervals from here, and due times from after it. */
  anchor: string;
} & NextRun;

/**
 * When the schedule is next due after the event, as its decider reckoned it (null while paused, or
 * with no due time in the next five years). Absent from events recorded before it was recorded:
 * read models reckon it then (`nextRunAt`).
 */
export interface NextRun {
  next_run_at?: string | null;
}

export type ScheduleFired = {
  type: 'ScheduleFired';
  data: {
    id: string;
    /** The due time fired: at most once per schedule, and later than every one fired before. */
    due_at: string;
    /** Derived from (schedule, due time): a retried or duplicated firing starts nothing new. */
    run_id: string;
    /** Due times missed while nobody was running (the first 100), not fired. */
    skipped: string[];
    skipped_count: number;
    /** What the firing starts, as the schedule said at that moment. */
    fields: ScheduleFields;
    executing_team_uid: string;
    team_uid: string | null;
    owner: ScheduleCreatedData['owner'];
    for: ScheduleOwner;
  } & NextRun;
};

export type ScheduleEvent =
  | { type: 'ScheduleCreated'; data: ScheduleCreatedData }
  /** PUT: every field replaced. A new recurrence, or a re-enabled schedule, counts from `since` on. */
  | { type: 'ScheduleReplaced'; data: { id: string; fields: ScheduleFields; anchor: string; since: string } & NextRun }
  | { type: 'SchedulePaused'; data: { id: string } }
  /** Resumed schedules fire from the moment they resume: what fell due while paused is not caught up. */
  | { type: 'ScheduleResumed'; data: { id: string; since: string } & NextRun }
  | { type: 'ScheduleDeleted'; data: { id: string } }
  | ScheduleFired
  /** The run of a firing could not be started (its model was disabled, its agent deleted, …). */
  | { type: 'ScheduleRunRefused'; data: { id: string; due_at: string; run_id: string; error: string } };

export const scheduleStream = (id: string) => `schedule-${id}`;

export const recurrenceOf = (f: Pick<ScheduleFields, 'cron_schedule' | 'rrule'>) =>
  f.rrule !== null ? { rrule: f.rrule } : { cron: f.cron_schedule! };

/**
 * The first due time of a schedule after what it last fired or since it began (whichever is
 * later), if enabled: within five years, or null.
 */
export function nextRunAt(
  f: Pick<ScheduleFields, 'cron_schedule' | 'rrule' | 'enabled'>,
  anchor: string,
  since: string,
  lastDueAt: string | null,
): string | null {
  if (!f.enabled) return null;
  const after = lastDueAt !== null && lastDueAt > since ? lastDueAt : since;
  return dueTimes(recurrenceOf(f), new Date(anchor)).nextAfter(new Date(after))?.toISOString() ?? null;
}
