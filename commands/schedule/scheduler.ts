/**
 * The scheduler: once a second, in one process of the store at a time, it asks the read model
 * which schedules are due by the server's clock and fires each from its own stream. A firing is decided on the write side (the schedule's
 * kept state), so the read model's lag or a second process firing the same due time at once
 * changes nothing: the decider fires each due time once, and the second firing decides nothing.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { v5 as uuidv5 } from 'uuid';
import type { Service } from '../../src/feature.js';
import { timeOrderedId } from '../../src/ids.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { schedulesProjection } from '../../projections/schedule/schedules.js';
import { scheduleDecider } from './schedule-decider.js';
import { recurrenceOf, scheduleStream } from './events.js';
import { dueAt } from './due.js';
import { dueTimes } from './recurrence.js';

const TICK_MS = 1000;
const DUE_PAGE = 100;
const NAMESPACE = '4b8e6f0a-9d1c-4a57-8c3e-2f7b5d6a1e90';

/** The run of a schedule's due time: the same for every process and every retry of the firing. */
const scheduledRunId = (scheduleId: string, dueAt: string) => uuidv5(`${scheduleId}@${dueAt}`, NAMESPACE);

const systemContext = (now: Date): CommandContext => ({
  now: now.toISOString(),
  actor: { type: 'system', uid: 'scheduler' },
  teams: {},
  team_uid: null,
  correlation_id: timeOrderedId(),
  causation_id: null,
  request_id: null,
});

/** Fires one schedule if a due time has come; the latest due time only, the missed ones recorded. */
async function fire(rt: Runtime, id: string, now: Date): Promise<boolean> {
  const s = await rt.state(scheduleDecider, scheduleStream(id));
  if (s.status !== 'live' || !s.fields.enabled) return false;
  const since = s.last_due_at && s.last_due_at > s.since ? s.last_due_at : s.since;
  const due = dueAt(dueTimes(recurrenceOf(s.fields), new Date(s.anchor)), new Date(since), now);
  if (!due) return false;
  const due_at = due.due.toISOString();
  const { events } = await rt.execute(
    scheduleStream(id),
    scheduleDecider,
    {
      type: 'FireSchedule',
      data: {
        id,
        due_at,
        run_id: scheduledRunId(id, due_at),
        skipped: due.skipped.map((d) => d.toISOString()),
        skipped_count: due.skipped_count,
      },
    },
    systemContext(now),
  );
  return events.length > 0;
}

/** One pass: fires every schedule due by the clock now. Returns how many fired. */
export async function fireDueSchedules(rt: Runtime): Promise<number> {
  const schedules = rt.readModel(schedulesProjection);
  const now = rt.clock.now();
  const due = await schedules.find({
    filter: { enabled: true, next_run_at: { $lte: now.toISOString() } },
    sort: [
      ['next_run_at', 'asc'],
      ['id', 'asc'],
    ],
    limit: DUE_PAGE,
  });
  let fired = 0;
  for (const doc of due.items) if (await fire(rt, doc.id, now)) fired++;
  return fired;
}

/** Runs the scheduler in one process of the store at a time (whichever holds its lease). */
export function startScheduler(rt: Runtime): Service {
  const exclusive = rt.exclusive('scheduler', async ({ signal }) => {
    while (!signal.aborted) {
      try {
        await fireDueSchedules(rt);
      } catch (error) {
        rt.log.error({ err: error }, 'scheduler pass failed; trying again');
      }
      await delay(TICK_MS, undefined, { signal }).catch(() => {});
    }
  });
  return { stop: () => exclusive.stop() };
}
