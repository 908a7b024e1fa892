/**
 * The rules of a scheduled agent: who may see and change it, and that each due time fires at most
 * once, in order, only while enabled, and never for a time before the schedule (or its resumption,
 * or its new recurrence) began.
 */
import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import { Forbidden, Conflict, InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import {
  nextRunAt,
  recurrenceOf,
  type ScheduleCreatedData,
  type ScheduleEvent,
  type ScheduleFields,
  type ScheduleFired,
} from './events.js';
import { recurrenceProblem } from './recurrence.js';
import { canSeeSchedule } from './resource.js';
import { ownsKey } from '../../src/own-keys.js';

export type ScheduleCommand =
  | { type: 'CreateSchedule'; data: Omit<ScheduleCreatedData, 'anchor' | 'next_run_at'> }
  | { type: 'ReplaceSchedule'; data: { id: string; fields: ScheduleFields } }
  | { type: 'PauseSchedule'; data: { id: string } }
  | { type: 'ResumeSchedule'; data: { id: string } }
  | { type: 'DeleteSchedule'; data: { id: string } }
  | {
      type: 'FireSchedule';
      data: Pick<ScheduleFired['data'], 'id' | 'due_at' | 'run_id' | 'skipped' | 'skipped_count'>;
    }
  | { type: 'RefuseRun'; data: { id: string; due_at: string; run_id: string; error: string } };

type LiveSchedule = Omit<ScheduleCreatedData, keyof ScheduleFields | 'next_run_at'> & {
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

/**
 * A recurrence being set must be one, and fall due within five years: what the log holds, every
 * read model can reckon (within its bound on work).
 */
function assertRecurs(fields: ScheduleFields, now: string): void {
  const problem = recurrenceProblem(recurrenceOf(fields), new Date(now));
  if (!problem) return;
  const field = fields.rrule !== null ? 'rrule' : 'cron_schedule';
  throw new InvalidRequest(`${field}: ${problem}`, [{ path: `body.${field}`, message: problem }]);
}

export const scheduleDecider: Decider<ScheduleCommand, ScheduleEvent, ScheduleState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    if (event.type === 'ScheduleCreated') {
      const {
        name,
        cron_schedule,
        rrule,
        prompt,
        enabled,
        agent_config,
        agent_uid,
        metadata,
        mode,
        requires_approval,
        next_run_at,
        ...rest
      } = event.data;
      const fields = {
        ...{ name, cron_schedule, rrule, prompt, enabled, agent_config, agent_uid, metadata, mode },
        ...(requires_approval ? { requires_approval } : {}),
      };
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
      assertRecurs(command.data, context.now);
      const next_run_at = nextRunAt(command.data, context.now, context.now, null);
      return [{ type: 'ScheduleCreated', data: { ...command.data, anchor: context.now, next_run_at } }];
    }
    const s = live(state, command.data.id, context);
    const id = s.id;
    switch (command.type) {
      case 'ReplaceSchedule': {
        const { fields } = command.data;
        if (JSON.stringify(fields) === JSON.stringify(s.fields)) return [];
        // Changes affect future runs only: a new recurrence counts from now, as does re-enabling.
        if (!sameRecurrence(fields, s.fields)) assertRecurs(fields, context.now);
        const anchor = sameRecurrence(fields, s.fields) ? s.anchor : context.now;
        const since = anchor !== s.anchor || (fields.enabled && !s.fields.enabled) ? context.now : s.since;
        const next_run_at = nextRunAt(fields, anchor, since, s.last_due_at);
        return [{ type: 'ScheduleReplaced', data: { id, fields, anchor, since, next_run_at } }];
      }
      case 'PauseSchedule':
        return s.fields.enabled ? [{ type: 'SchedulePaused', data: { id } }] : [];
      case 'ResumeSchedule': {
        if (s.fields.enabled) return [];
        const next_run_at = nextRunAt({ ...s.fields, enabled: true }, s.anchor, context.now, s.last_due_at);
        return [{ type: 'ScheduleResumed', data: { id, since: context.now, next_run_at } }];
      }
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
            data: {
              ...command.data,
              fields,
              executing_team_uid,
              team_uid,
              owner,
              for: s.for,
              next_run_at: nextRunAt(fields, s.anchor, s.since, due_at),
            },
          },
        ];
      }
      case 'RefuseRun':
        return s.refused.includes(command.data.run_id) ? [] : [{ type: 'ScheduleRunRefused', data: command.data }];
    }
  },
};
