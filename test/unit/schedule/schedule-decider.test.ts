import { describe, it } from 'vitest';
import { scheduleDecider } from '../../../commands/schedule/schedule-decider.js';
import type { ScheduleEvent, ScheduleFields } from '../../../commands/schedule/events.js';
import { Forbidden, NotFound } from '../../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../../helpers/decider-spec.js';

const spec = deciderSpec(scheduleDecider);
const fields: ScheduleFields = {
  name: 'nightly',
  cron_schedule: '0 2 * * *',
  rrule: null,
  prompt: 'p',
  enabled: true,
  agent_config: null,
  agent_uid: null,
  metadata: {},
  mode: 'normal',
};
const created: ScheduleEvent = {
  type: 'ScheduleCreated',
  data: {
    ...fields,
    id: 's-1',
    team_uid: 't-1',
    executing_team_uid: 't-1',
    owner: { type: 'user', uid: 'u-1' },
    for: { kind: 'agent' },
    anchor: '2026-01-01T00:00:00.000Z',
  },
};
const fired = (due_at: string): ScheduleEvent => ({
  type: 'ScheduleFired',
  data: {
    id: 's-1',
    due_at,
    run_id: `r-${due_at}`,
    skipped: [],
    skipped_count: 0,
    fields,
    executing_team_uid: 't-1',
    team_uid: 't-1',
    owner: { type: 'user', uid: 'u-1' },
    for: { kind: 'agent' },
  },
});
const fire = (due_at: string) => ({
  type: 'FireSchedule' as const,
  data: { id: 's-1', due_at, run_id: `r-${due_at}`, skipped: [], skipped_count: 0 },
});
const at = (now: string) => ({ ...userContext(), now });

describe('schedule decider', () => {
  it('fires a due time once, with what the schedule says at that moment', () => {
    spec
      .given([created])
      .when(fire('2026-01-02T02:00:00.000Z'), at('2026-01-02T02:00:05.000Z'))
      .then([{ type: 'ScheduleFired', data: { due_at: '2026-01-02T02:00:00.000Z', fields } }]);
    spec
      .given([created, fired('2026-01-02T02:00:00.000Z')])
      .when(fire('2026-01-02T02:00:00.000Z'), at('2026-01-02T03:00:00.000Z'))
      .thenNothingHappened();
  });

  it('never fires a due time before the last one fired, before it began, or still to come', () => {
    spec
      .given([created, fired('2026-01-03T02:00:00.000Z')])
      .when(fire('2026-01-02T02:00:00.000Z'), at('2026-01-04T00:00:00.000Z'))
      .thenNothingHappened();
    spec.given([created]).when(fire('2025-12-31T02:00:00.000Z'), at('2026-01-04T00:00:00.000Z')).thenNothingHappened();
    spec.given([created]).when(fire('2026-01-02T02:00:00.000Z'), at('2026-01-02T01:59:00.000Z')).thenNothingHappened();
  });

  it('does not fire while paused, and counts from its resumption', () => {
    const paused: ScheduleEvent = { type: 'SchedulePaused', data: { id: 's-1' } };
    spec
      .given([created, paused])
      .when(fire('2026-01-02T02:00:00.000Z'), at('2026-01-02T03:00:00.000Z'))
      .thenNothingHappened();
    spec
      .given([created, paused])
      .when({ type: 'ResumeSchedule', data: { id: 's-1' } }, at('2026-01-05T10:00:00.000Z'))
      .then([{ type: 'ScheduleResumed', data: { since: '2026-01-05T10:00:00.000Z' } }]);
    const resumed: ScheduleEvent = { type: 'ScheduleResumed', data: { id: 's-1', since: '2026-01-05T10:00:00.000Z' } };
    spec
      .given([created, paused, resumed])
      .when(fire('2026-01-05T02:00:00.000Z'), at('2026-01-05T11:00:00.000Z'))
      .thenNothingHappened();
  });

  it('counts a new recurrence from its change, and keeps the old count when only the prompt changes', () => {
    spec
      .given([created])
      .when(
        { type: 'ReplaceSchedule', data: { id: 's-1', fields: { ...fields, cron_schedule: '@hourly' } } },
        at('2026-01-03T00:30:00.000Z'),
      )
      .then([
        { type: 'ScheduleReplaced', data: { anchor: '2026-01-03T00:30:00.000Z', since: '2026-01-03T00:30:00.000Z' } },
      ]);
    spec
      .given([created])
      .when(
        { type: 'ReplaceSchedule', data: { id: 's-1', fields: { ...fields, prompt: 'q' } } },
        at('2026-01-03T00:30:00.000Z'),
      )
      .then([
        { type: 'ScheduleReplaced', data: { anchor: '2026-01-01T00:00:00.000Z', since: '2026-01-01T00:00:00.000Z' } },
      ]);
  });

  it('belongs to its team: others do not see it, and only members create in a team', () => {
    spec
      .given([created])
      .when({ type: 'PauseSchedule', data: { id: 's-1' } }, userContext('u-2', { 't-2': 'admin' }))
      .thenThrows(NotFound);
    spec
      .given([])
      .when(
        { type: 'CreateSchedule', data: { ...(created.data as Omit<typeof created.data, 'anchor'>) } },
        userContext('u-2', { 't-2': 'admin' }),
      )
      .thenThrows(Forbidden);
  });
});
