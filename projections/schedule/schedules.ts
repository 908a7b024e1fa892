/**
 * Scheduled agents, one document each, with when each is next due (as its events recorded it, so
 * a rebuild gives the same times) and its most recent firings.
 */
import { projection } from '../../src/projector/projection.js';
import {
  type NextRun,
  nextRunAt,
  type ScheduleEvent,
  type ScheduleFields,
  type ScheduleOwner,
} from '../../commands/schedule/events.js';

const KEPT_FIRINGS = 20;

type Who = { type: 'user' | 'service_account'; uid: string };

export interface ScheduleDoc extends ScheduleFields {
  [field: string]: unknown;
  id: string;
  for: ScheduleOwner;
  /** `agent` schedules are listed under /agent/schedules; an automation's inline ones are not. */
  kind: ScheduleOwner['kind'];
  team_uid: string | null;
  executing_team_uid: string;
  owner: { type: 'user' | 'agent'; uid: string };
  anchor: string;
  since: string;
  last_due_at: string | null;
  /** Null while paused, or when the recurrence has no more due times. */
  next_run_at: string | null;
  firings: Array<{ due_at: string; run_id: string; skipped_count: number; skipped: string[]; error: string | null }>;
  last_spawn_error: string | null;
  /** Lower-cased name: the list sorts by it. */
  name_key: string;
  created_by: Who;
  updated_by: Who;
  created_at: string;
  updated_at: string;
}

const who = (actor: { type: string; uid: string }): Who => ({
  type: actor.type === 'user' ? 'user' : 'service_account',
  uid: actor.uid,
});

/**
 * The next due time the event recorded; for an event recorded before decisions recorded it, the
 * same reckoning from the document (bounded in work like the decider's).
 */
const next = (
  e: { data: NextRun },
  d: Pick<ScheduleDoc, 'cron_schedule' | 'rrule' | 'enabled' | 'anchor' | 'since' | 'last_due_at'>,
) => (e.data.next_run_at !== undefined ? e.data.next_run_at : nextRunAt(d, d.anchor, d.since, d.last_due_at));

export const schedulesProjection = projection<ScheduleEvent, ScheduleDoc>({
  name: 'schedules',
  // 2: the next due time as recorded, or reckoned within a bound (issue #30)
  version: 2,
  indexes: [
    // The scheduler asks for what is due: enabled ones by next due time.
    ['enabled', 'next_run_at'],
    ['team_uid', 'kind', 'name_key'],
    ['owner.uid', 'kind', 'name_key'],
    // An automation's inline schedules, kept in step with it.
    ['for.automation_id'],
  ],
  on: {
    ScheduleCreated: (e, docs) => {
      const d = e.data;
      const at = e.metadata.occurred_at;
      const { next_run_at: _recorded, ...created } = d;
      const doc: ScheduleDoc = {
        ...created,
        kind: d.for.kind,
        since: d.anchor,
        last_due_at: null,
        next_run_at: null,
        firings: [],
        last_spawn_error: null,
        name_key: d.name.toLowerCase(),
        created_by: who(e.metadata.actor),
        updated_by: who(e.metadata.actor),
        created_at: at,
        updated_at: at,
      };
      docs.put(d.id, { ...doc, next_run_at: next(e, doc) });
    },
    ScheduleReplaced: async (e, docs) => {
      const doc = await docs.get(e.data.id);
      if (!doc) return;
      const { fields, anchor, since } = e.data;
      const changed = { ...doc, ...fields, anchor, since, name_key: fields.name.toLowerCase() };
      docs.put(doc.id, {
        ...changed,
        next_run_at: next(e, changed),
        updated_by: who(e.metadata.actor),
        updated_at: e.metadata.occurred_at,
      });
    },
    SchedulePaused: (e, docs) =>
      docs.patch(e.data.id, {
        enabled: false,
        next_run_at: null,
        updated_by: who(e.metadata.actor),
        updated_at: e.metadata.occurred_at,
      }),
    ScheduleResumed: async (e, docs) => {
      const doc = await docs.get(e.data.id);
      if (!doc) return;
      const resumed = { ...doc, enabled: true, since: e.data.since };
      docs.put(doc.id, {
        ...resumed,
        next_run_at: next(e, resumed),
        updated_by: who(e.metadata.actor),
        updated_at: e.metadata.occurred_at,
      });
    },
    ScheduleDeleted: (e, docs) => docs.delete(e.data.id),
    ScheduleFired: async (e, docs) => {
      const doc = await docs.get(e.data.id);
      if (!doc) return;
      const { due_at, run_id, skipped, skipped_count } = e.data;
      const fired = { ...doc, last_due_at: due_at };
      const firing = { due_at, run_id, skipped_count, skipped, error: null };
      docs.put(doc.id, {
        ...fired,
        next_run_at: next(e, fired),
        firings: [firing, ...doc.firings].slice(0, KEPT_FIRINGS),
      });
    },
    ScheduleRunRefused: async (e, docs) => {
      const doc = await docs.get(e.data.id);
      if (!doc) return;
      const firings = doc.firings.map((f) => (f.run_id === e.data.run_id ? { ...f, error: e.data.error } : f));
      docs.patch(doc.id, { firings, last_spawn_error: e.data.error });
    },
  },
});
