/**
 * The rules of a scheduled agent: who may see and change it, and that each due time fires at most
 * once, in order, only while enabled, and never for a time before the schedule (or its resumption,
 * or its new recurrence) began.
 */
import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import { Forbidden, Conflict, NotFound } from '../../src/kernel/errors.js';
import type { ScheduleCreatedData, ScheduleEvent, ScheduleFields, ScheduleFired } from './events.js';
import { canSeeSchedule } from './resource.js';
import { ownsKey } from '../../src/own-keys.js';

export type ScheduleCommand =
  | { type: 'CreateSchedule'; data: Omit<ScheduleCreatedData, 'anchor'> }
  | { type: 'ReplaceSchedule'; data: { id: string; fields: ScheduleFields } }
  | { type: 'PauseSchedule'; data: { id: string } }
  | { type: 'ResumeSchedule'; data: { id: string } }
  | { type: 'DeleteSchedule'; data: { id: string } }
  | {
      type: 'FireSchedule';
      data: Pick<ScheduleFired['data'], 'id' | 'due_at' | 'run_id' | 'skipped' | 'skipped_count'>;
    }
  | { type: 'RefuseRun'; data: { id: string; due_at: string; run_id: string; error: string } };

type LiveSchedule = Omit<ScheduleCreatedData, keyof ScheduleFields> & {
  status: 'live';
  fields: ScheduleFields;
  /** Due times count from after this moment: creation, a new recurrence, or resumption. */
  since: string;
  last_due_at: string | null;
  refused: string[];
};

export type ScheduleState = { status: 'none' } | { status: 'deleted' } | LiveSchedule;

function live(state: ScheduleState, id: string, context: DecideContext): LiveSchedule {
  if (state.status !== 'live' || !canSeeSchedule(state, context)) throw new NotFound('schedule', id);
  return state;
}

const sameRecurrence = (a: ScheduleFields, b: ScheduleFields) =>
  a.cron_schedule === b.cron_schedule && a.rrule === b.rrule;

/** The later of two instants given as ISO strings (they compare as strings). */
const later = (a: string, b: string | null) => (b !== null && b > a ? b : a);

export const scheduleDecider: Decider<ScheduleCommand, ScheduleEvent, ScheduleState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    if (event.type === 'ScheduleCreated') {
      const { name, cron_schedule, rrule, prompt, enabled, agent_config, agent_uid, metadata, mode, ...rest } =
        event.data;
      const fields = { name, cron_schedule, rrule, prompt, enabled, agent_config, agent_uid, metadata, mode };
      return { status: 'live', ...rest, fields, since: rest.anchor, last_due_at: null, refused: [] };
    }
    if (state.status !== 'live') return state;
    switch (event.type) {
      case 'ScheduleReplaced': {
        const { fields, anchor, since } = event.data;
        return { ...state, fields, anchor, since };
      }
      case 'SchedulePaused':
        return { ...state, fields: { ...state.fields, enabled: false } };
      case 'ScheduleResumed':
        return { ...state, fields: { ...state.fields, enabled: true }, since: event.data.since };
      case 'ScheduleDeleted':
        return { status: 'deleted' };
      case 'ScheduleFired':
        return { ...state, last_due_at: event.data.due_at };
      case 'ScheduleRunRefused':
        return { ...state, refused: [...state.refused.slice(-99), event.data.run_id] };
      default:
        return state;
    }
  },

  decide: (command, state, context) => {
    if (command.type === 'CreateSchedule') {
      if (state.status !== 'none') throw new Conflict(`schedule ${command.data.id} exists`);
      const { team_uid } = command.data;
      // The system keeps automations' inline schedules for their factory's team.
      if (team_uid && context.actor.type !== 'system' && !ownsKey(context.teams, team_uid))
        throw new Forbidden(`not a member of team ${team_uid}`);
      return [{ type: 'ScheduleCreated', data: { ...command.data, anchor: context.now } }];
    }
    const s = live(state, command.data.id, context);
    const id = s.id;
    switch (command.type) {
      case 'ReplaceSchedule': {
        const { fields } = command.data;
        if (JSON.stringify(fields) === JSON.stringify(s.fields)) return [];
        // Changes affect future runs only: a new recurrence counts from now, as does re-enabling.
        const anchor = sameRecurrence(fields, s.fields) ? s.anchor : context.now;
        const since = anchor !== s.anchor || (fields.enabled && !s.fields.enabled) ? context.now : s.since;
        return [{ type: 'ScheduleReplaced', data: { id, fields, anchor, since } }];
      }
      case 'PauseSchedule':
        return s.fields.enabled ? [{ type: 'SchedulePaused', data: { id } }] : [];
      case 'ResumeSchedule':
        return s.fields.enabled ? [] : [{ type: 'ScheduleResumed', data: { id, since: context.now } }];
      case 'DeleteSchedule':
        return [{ type: 'ScheduleDeleted', data: { id } }];
      case 'FireSchedule': {
        const { due_at } = command.data;
        // Stale or repeated firings (another process, a retry) decide nothing.
        if (!s.fields.enabled || due_at <= later(s.since, s.last_due_at) || due_at > context.now) return [];
        const { fields, executing_team_uid, team_uid, owner } = s;
        return [
          {
            type: 'ScheduleFired',
            data: { ...command.data, fields, executing_team_uid, team_uid, owner, for: s.for },
          },
        ];
      }
      case 'RefuseRun':
        return s.refused.includes(command.data.run_id) ? [] : [{ type: 'ScheduleRunRefused', data: command.data }];
    }
  },
};
