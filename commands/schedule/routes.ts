/** POST, PUT and DELETE /agent/schedules, and pause and resume: the rules are the decider's. */
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { activeTeam } from '../../src/http/auth.js';
import { commandContext } from '../../src/http/context.js';
import { timeOrderedId } from '../../src/ids.js';
import { InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { schedulesProjection } from '../../projections/schedule/schedules.js';
import { assertUsableEnvironment, environmentDecider } from '../environment/public.js';
import { environmentStream } from '../environment/events.js';
import { identityDecider } from '../identity/public.js';
import { identityStream } from '../identity/events.js';
import { assertUsableModel, modelDecider } from '../model/public.js';
import { MODELS_STREAM } from '../model/events.js';
import { type ScheduleCommand, scheduleDecider } from './schedule-decider.js';
import { type ScheduleFields, scheduleStream } from './events.js';
import {
  createScheduleBody,
  replaceScheduleBody,
  scheduleAnswers,
  scheduleParams,
  scheduleResource,
} from './resource.js';

const invalid = (path: string, message: string) => new InvalidRequest(message, [{ path: `body.${path}`, message }]);

const tags = ['schedules'];

/** What the schedule routes share: the answer, the schedule's stream, and the checks of its settings. */
function scheduleRouting(rt: Runtime) {
  const schedules = rt.readModel(schedulesProjection);
  const answers = scheduleAnswers(rt);
  return {
    rt,
    /** The schedule as the read model shows it now that the command's events are projected. */
    current: async (id: string) => {
      const doc = await schedules.get(id);
      if (!doc) throw new NotFound('schedule', id);
      return (await answers([doc]))[0]!;
    },
    execute: (id: string, command: ScheduleCommand, context: CommandContext) =>
      rt.execute(scheduleStream(id), scheduleDecider, command, context),
    /** A schedule's runs may use only an enabled model of the catalogue, and an environment of its team. */
    assertConfig: async (fields: ScheduleFields, teamUid: string) => {
      const config = fields.agent_config ?? {};
      const model = config.model_id as string | undefined;
      assertUsableModel(await rt.state(modelDecider, MODELS_STREAM), model, 'body.agent_config.model_id');
      const environment = config.environment_id as string | undefined;
      if (environment) {
        const state = await rt.state(environmentDecider, environmentStream(environment));
        assertUsableEnvironment(state, teamUid, environment, 'body.agent_config.environment_id');
      }
    },
    /** The executing agent must be a live agent of the schedule's team. */
    assertAgent: async (agentUid: string | null, teamUid: string | null) => {
      if (agentUid === null) return;
      if (teamUid === null) throw invalid('agent_uid', 'an agent executes team schedules only');
      const agent = await rt.state(identityDecider, identityStream(agentUid));
      if (agent.status !== 'live' || agent.team_uid !== teamUid)
        throw invalid('agent_uid', 'no such agent in the team');
    },
  };
}

type ScheduleRouting = ReturnType<typeof scheduleRouting>;

export default function scheduleRoutes(api: Api, rt: Runtime): void {
  const routing = scheduleRouting(rt);
  createRoute(api, routing);
  replaceRoute(api, routing);
  deleteRoute(api, routing);
  pauseAndResumeRoutes(api, routing);
}

function createRoute(api: Api, { current, execute, assertConfig, assertAgent }: ScheduleRouting): void {
  api.post(
    '/agent/schedules',
    { schema: { body: createScheduleBody, response: { 201: scheduleResource }, tags }, config: { idempotent: true } },
    async (req, reply) => {
      const { team, ...body } = req.body;
      const id = timeOrderedId();
      const executing = activeTeam(req).uid;
      const team_uid = (team ?? true) ? executing : null;
      const fields: ScheduleFields = {
        name: body.name,
        cron_schedule: body.cron_schedule ?? null,
        rrule: body.rrule ?? null,
        prompt: body.prompt ?? '',
        enabled: body.enabled,
        agent_config: body.agent_config ?? null,
        agent_uid: body.agent_uid ?? null,
        metadata: body.metadata ?? {},
        mode: body.mode,
        ...(body.requires_approval ? { requires_approval: true } : {}),
      };
      await assertAgent(fields.agent_uid, team_uid);
      await assertConfig(fields, executing);
      const principal = req.principal!;
      await execute(
        id,
        {
          type: 'CreateSchedule',
          data: {
            id,
            ...fields,
            team_uid,
            executing_team_uid: executing,
            owner: { type: principal.type, uid: principal.uid },
            for: { kind: 'agent' },
          },
        },
        commandContext(req),
      );
      return reply.code(201).send(await current(id));
    },
  );
}

function replaceRoute(api: Api, { rt, current, execute, assertConfig, assertAgent }: ScheduleRouting): void {
  api.put(
    '/agent/schedules/:schedule_id',
    { schema: { params: scheduleParams, body: replaceScheduleBody, response: { 200: scheduleResource }, tags } },
    async (req) => {
      const { schedule_id } = req.params;
      const state = await rt.state(scheduleDecider, scheduleStream(schedule_id));
      if (state.status !== 'live') throw new NotFound('schedule', schedule_id);
      const b = req.body;
      // Omitted optional fields keep their value; an explicit null clears it.
      const keep = <T>(given: T | null | undefined, now: T | null): T | null => (given === undefined ? now : given);
      const fields: ScheduleFields = {
        name: b.name,
        cron_schedule: b.cron_schedule ?? null,
        rrule: b.rrule ?? null,
        prompt: b.prompt,
        enabled: b.enabled,
        agent_config: keep(b.agent_config, state.fields.agent_config),
        agent_uid: keep(b.agent_uid, state.fields.agent_uid),
        metadata: b.metadata ?? state.fields.metadata,
        mode: b.mode ?? state.fields.mode,
        ...((b.requires_approval ?? state.fields.requires_approval) ? { requires_approval: true } : {}),
      };
      await assertAgent(fields.agent_uid, state.team_uid);
      await assertConfig(fields, state.executing_team_uid);
      await execute(schedule_id, { type: 'ReplaceSchedule', data: { id: schedule_id, fields } }, commandContext(req));
      return current(schedule_id);
    },
  );
}

function deleteRoute(api: Api, { execute }: ScheduleRouting): void {
  api.delete(
    '/agent/schedules/:schedule_id',
    { schema: { params: scheduleParams, response: { 200: z.object({ success: z.boolean() }) }, tags } },
    async (req) => {
      const { schedule_id } = req.params;
      await execute(schedule_id, { type: 'DeleteSchedule', data: { id: schedule_id } }, commandContext(req));
      return { success: true };
    },
  );
}

function pauseAndResumeRoutes(api: Api, { current, execute }: ScheduleRouting): void {
  for (const [action, type] of [
    ['pause', 'PauseSchedule'],
    ['resume', 'ResumeSchedule'],
  ] as const) {
    api.post(
      `/agent/schedules/:schedule_id/${action}`,
      { schema: { params: scheduleParams, response: { 200: scheduleResource }, tags } },
      async (req) => {
        const { schedule_id } = req.params;
        await execute(schedule_id, { type, data: { id: schedule_id } }, commandContext(req));
        return current(schedule_id);
      },
    );
  }
}
