/**
 * Automations with `schedule/cron_fired` triggers. An inline `schedule{name?, cron}` is a schedule
 * of its own, kept in step with the automation by the first reactor (created, changed, paused with
 * it, deleted when the trigger goes; not listed under /agent/schedules); `filter.schedule_ids`
 * names scheduled agents. Each firing of either starts the automation's factory run once: the run
 * id derives from the firing event and the automation.
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import { derivedId, reactionContext, reactor } from '../../src/projector/reactor.js';
import type { Runtime } from '../../src/runtime.js';
import { findAll } from '../../src/readstore/paging.js';
import { automationsProjection } from '../../projections/automation/automations.js';
import { identitiesProjection } from '../identity/public.js';
import { schedulesProjection, scheduleDecider } from '../schedule/public.js';
import { type LiveFactory, liveFactory } from '../factory/public.js';
import { type ScheduleFields, type ScheduleFired, scheduleStream } from '../schedule/events.js';
import { foremanOf } from '../task/public.js';
import type { Automation } from './automations-decider.js';
import { type AutomationEvent, inlineScheduleId, scheduleIdsOf } from './events.js';
import { factoryAutomations, startAutomationRun } from './automation-runs-reactor.js';

/** The inline schedules an automation asks for, by id. */
function inlineSchedules(automation: Automation | undefined): Map<string, ScheduleFields> {
  const wanted = new Map<string, ScheduleFields>();
  for (const t of automation?.triggers ?? []) {
    if (t.provider !== 'schedule' || !t.schedule) continue;
    wanted.set(inlineScheduleId(automation!.id, t.schedule.name), {
      name: `${automation!.name}: ${t.schedule.name ?? 'schedule'}`,
      cron_schedule: t.schedule.cron,
      rrule: null,
      prompt: automation!.prompt,
      enabled: automation!.enabled,
      agent_config: null,
      agent_uid: null,
      metadata: {},
      mode: 'normal',
    });
  }
  return wanted;
}

async function syncInlineSchedules(rt: Runtime, event: RecordedEvent<AutomationEvent>): Promise<void> {
  const { id, factory_uid } = event.data;
  const automation = (await factoryAutomations(rt, factory_uid)).find((a) => a.id === id);
  const wanted = inlineSchedules(automation);
  const kept = await findAll(rt.readModel(schedulesProjection), {
    filter: { 'for.automation_id': id },
    sort: [['id', 'asc']],
    limit: 100,
  });
  const context = reactionContext(event, rt.clock.now());
  const execute = async (scheduleId: string, command: Parameters<typeof scheduleDecider.decide>[0]) => {
    try {
      await rt.execute(scheduleStream(scheduleId), scheduleDecider, command, context);
    } catch (error) {
      // A cron recorded before the automation's decider asked that it fall due: the schedule
      // decider refuses it, and the automation runs without that schedule.
      if (!(error instanceof InvalidRequest)) throw error;
      rt.log.warn({ err: error, automation: id, schedule: scheduleId }, 'inline schedule refused');
    }
  };
  for (const [scheduleId, fields] of wanted) {
    const state = await rt.state(scheduleDecider, scheduleStream(scheduleId));
    if (state.status === 'live')
      await execute(scheduleId, { type: 'ReplaceSchedule', data: { id: scheduleId, fields } });
    else if (state.status === 'none' && automation) {
      const team = automation.team_uid;
      await execute(scheduleId, {
        type: 'CreateSchedule',
        data: {
          id: scheduleId,
          ...fields,
          team_uid: team,
          executing_team_uid: team,
          owner: { type: 'agent', uid: `automation:${id}` },
          for: { kind: 'automation', automation_id: id, factory_uid },
        },
      });
    }
  }
  for (const gone of kept.filter((s) => !wanted.has(s.id)))
    await execute(gone.id, { type: 'DeleteSchedule', data: { id: gone.id } });
}

export const automationSchedulesReactor = reactor<AutomationEvent, Runtime>({
  name: 'automation-schedules',
  replay: 'after-last-effect',
  on: {
    AutomationCreated: (event, rt) => syncInlineSchedules(rt, event),
    AutomationUpdated: (event, rt) => syncInlineSchedules(rt, event),
    AutomationDeleted: (event, rt) => syncInlineSchedules(rt, event),
  },
});

/** The automations a firing is for: the owner of an inline schedule, or those naming the schedule. */
async function firedFor(
  rt: Runtime,
  fired: ScheduleFired['data'],
): Promise<Array<{ id: string; factory_uid: string }>> {
  if (fired.for.kind === 'automation') return [{ id: fired.for.automation_id, factory_uid: fired.for.factory_uid }];
  const docs = await findAll(rt.readModel(automationsProjection), {
    filter: { schedule_ids: { $has: fired.id } },
    sort: [['id', 'asc']],
    limit: 500,
  });
  return docs.map((d) => ({ id: d.id, factory_uid: d.factory_uid }));
}

async function startScheduledRuns(rt: Runtime, event: RecordedEvent<ScheduleFired>): Promise<void> {
  const fired = event.data;
  const context = reactionContext(event, rt.clock.now());
  for (const { id, factory_uid } of await firedFor(rt, fired)) {
    // As the automation stands now (the write side): enabled, and still firing on this schedule.
    const automation = (await factoryAutomations(rt, factory_uid)).find((a) => a.id === id);
    if (!automation?.enabled || !automation.triggers.some((t) => scheduleIdsOf(id, t).includes(fired.id))) continue;
    let factory: LiveFactory;
    try {
      factory = await liveFactory(rt, factory_uid, context);
    } catch (error) {
      if (error instanceof NotFound) continue;
      throw error;
    }
    const foreman = await foremanOf(rt, rt.readModel(identitiesProjection), factory);
    await startAutomationRun(rt, automation, factory, foreman?.uid ?? null, context, {
      run_id: derivedId(event, `automation-run:${id}`),
      prompt: [
        automation.prompt,
        '',
        '---',
        `This run was started by the schedule "${fired.fields.name}" (${fired.id}) for its due time ${fired.due_at}.`,
      ].join('\n'),
      source: 'SCHEDULED_AGENT',
      fired_by: { schedule: { schedule_id: fired.id, due_at: fired.due_at } },
      metadata: { automation_id: id, schedule_id: fired.id, factory_uid: factory.uid },
      schedule: { schedule_id: fired.id, schedule_name: fired.fields.name, cron_schedule: fired.fields.cron_schedule },
    });
  }
}

export const scheduledAutomationRunsReactor = reactor<ScheduleFired, Runtime>({
  name: 'scheduled-automation-runs',
  replay: 'after-last-effect',
  on: { ScheduleFired: (event, rt) => startScheduledRuns(rt, event) },
});
