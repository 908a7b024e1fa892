/**
 * Each firing of an agent schedule starts its run, with the id the firing derived, so a firing
 * seen twice (a replay, a second process) starts one run. The run is started on behalf of the
 * schedule's owner, as `POST /agent/runs` would start it; when it cannot be (the owner left the
 * team, the model was disabled), the refusal is recorded on the schedule (`last_spawn_error`).
 */
import { Conflict, DomainError } from '../../src/kernel/errors.js';
import { reactionContext, reactor } from '../../src/projector/reactor.js';
import type { Runtime } from '../../src/runtime.js';
import { identitiesProjection } from '../identity/public.js';
import { usersProjection } from '../user/public.js';
import { createRun, joinConversation, runState } from '../run/public.js';
import { scheduleDecider } from './schedule-decider.js';
import { type ScheduleFired, scheduleStream } from './events.js';
import { ownsKey } from '../../src/own-keys.js';

/** The owner's teams now: they start the run as themselves, or not at all. */
async function ownerTeams(
  rt: Runtime,
  owner: ScheduleFired['data']['owner'],
): Promise<Record<string, 'admin' | 'member'>> {
  if (owner.type === 'agent') {
    const agent = await rt.readModel(identitiesProjection).get(owner.uid);
    return agent ? { [agent.team_uid]: 'member' } : {};
  }
  const user = await rt.readModel(usersProjection).get(owner.uid);
  return Object.fromEntries((user?.memberships ?? []).map((m) => [m.team_uid, m.role]));
}

export const scheduledRunsReactor = reactor<ScheduleFired, Runtime>({
  name: 'scheduled_runs',
  replay: 'after-last-effect',
  on: {
    ScheduleFired: async (event, rt) => {
      const { id, due_at, run_id, fields, executing_team_uid, team_uid, owner } = event.data;
      if (event.data.for.kind !== 'agent') return;
      const teams = await ownerTeams(rt, owner);
      const context = { ...reactionContext(event, rt.clock.now()), actor: owner, teams, team_uid: executing_team_uid };
      const started = await runState(rt, run_id);
      if (started) return joinConversation(rt, started, context);
      try {
        if (!ownsKey(teams, executing_team_uid))
          throw new DomainError(403, 'not_authorized', 'Forbidden', `the schedule's owner is no longer in its team`);
        await createRun(
          rt,
          {
            prompt: fields.prompt,
            title: fields.name,
            ...(fields.agent_config ? { config: fields.agent_config } : {}),
            ...(fields.agent_uid ? { agent_identity_uid: fields.agent_uid } : {}),
            team: team_uid !== null,
            metadata: fields.metadata,
            mode: fields.mode,
            interactive: false,
          },
          context,
          {
            source: 'SCHEDULED_AGENT',
            team_uid: executing_team_uid,
            run_id,
            schedule: {
              schedule_id: id,
              schedule_name: fields.name,
              cron_schedule: fields.cron_schedule,
              ...(fields.rrule ? { rrule: fields.rrule } : {}),
            },
            ...(fields.requires_approval ? { requires_approval: 'schedule' as const } : {}),
          },
        );
      } catch (error) {
        if (error instanceof Conflict && (await runState(rt, run_id))) return; // another process started it
        if (!(error instanceof DomainError)) throw error;
        await rt.execute(
          scheduleStream(id),
          scheduleDecider,
          { type: 'RefuseRun', data: { id, due_at, run_id, error: error.message } },
          { ...context, actor: { type: 'system', uid: 'scheduler' } },
        );
      }
    },
  },
});
