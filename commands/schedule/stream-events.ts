/**
 * What a schedule tells a team's event stream: each firing (the run it starts, the due times it
 * skipped). Readable as the schedule is (`canSeeSchedule`): its team's members, a personal
 * schedule's owner.
 */
import { z } from 'zod';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { StreamEventSource, StreamItem } from '../../src/streams/stream-events.js';
import type { ScheduleFired } from './events.js';
import { canSeeSchedule } from './resource.js';

const firedSchema = z.object({
  schedule_id: z.string(),
  name: z.string(),
  kind: z.enum(['agent', 'automation']).describe("An agent's schedule, or an automation's inline one"),
  due_at: z.string().describe('The due time fired'),
  run_id: z.string().describe('The run it starts (an automation firing: the id its run is derived from)'),
  skipped_count: z.number().int().describe('Due times missed while no server ran, not fired'),
  next_run_at: z.string().nullable(),
});

async function mapFiring(_rt: unknown, event: RecordedEvent): Promise<StreamItem | null> {
  const d = (event as unknown as ScheduleFired).data;
  const owner = { team_uid: d.team_uid, owner: d.owner };
  return {
    type: 'schedule.fired',
    data: {
      schedule_id: d.id,
      name: d.fields.name,
      kind: d.for.kind,
      due_at: d.due_at,
      run_id: d.run_id,
      skipped_count: d.skipped_count,
      next_run_at: d.next_run_at ?? null,
    },
    team_uid: d.team_uid,
    factory_uid: d.for.kind === 'automation' ? d.for.factory_uid : null,
    run: null,
    readable: ({ principal, team }) =>
      canSeeSchedule(owner, {
        actor: principal,
        teams: team === null ? Object.fromEntries(principal.teams) : principal.teams.has(team) ? { [team]: 1 } : {},
      }),
  };
}

export const scheduleStreamEvents: StreamEventSource = {
  from: ['ScheduleFired'],
  types: { 'schedule.fired': { feeds: ['team'], description: 'A schedule fired', schema: firedSchema } },
  map: mapFiring,
};
