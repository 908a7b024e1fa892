/**
 * The scheduled agent as the API takes and answers it (`ScheduledAgentItem` of the hosted
 * service, with `rrule` and the firing history as extensions), and when a schedule is next due.
 */
import { z } from 'zod';
import type { Actor } from '../../src/kernel/decider.js';
import { agentConfigSchema, metadataSchema, runModeSchema } from '../run/public.js';
import type { Runtime } from '../../src/runtime.js';
import { identitiesProjection } from '../identity/public.js';
import type { ScheduleDoc } from '../../projections/schedule/schedules.js';
import { usersProjection } from '../user/public.js';
import { cronProblem, rruleProblem } from './recurrence.js';
import { ownsKey } from '../../src/own-keys.js';

const MAX_PROMPT_LENGTH = 100_000;

const refine = (check: (v: string) => string | null) => (v: string, ctx: z.RefinementCtx) => {
  const problem = check(v);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
};

const fields = {
  name: z.string().trim().min(1).max(200),
  cron_schedule: z.string().trim().max(200).superRefine(refine(cronProblem)),
  rrule: z.string().trim().max(2000).superRefine(refine(rruleProblem)),
  prompt: z.string().max(MAX_PROMPT_LENGTH),
  enabled: z.boolean(),
  agent_config: agentConfigSchema,
  agent_uid: z.string().min(1).max(128),
  metadata: metadataSchema,
  mode: runModeSchema,
  requires_approval: z.boolean().describe('Extension (guardrails): its runs wait for a team admin’s approval'),
};

/** Exactly one recurrence, and something to run: a prompt, or a skill in the agent config. */
const complete = <T extends { cron_schedule?: string | null; rrule?: string | null; prompt?: string | null }>(
  b: T & { agent_config?: { skill_spec?: string; skills?: string[] } | null },
  ctx: z.RefinementCtx,
) => {
  if ((b.cron_schedule != null) === (b.rrule != null))
    ctx.addIssue({ code: 'custom', path: ['cron_schedule'], message: 'give exactly one of cron_schedule and rrule' });
  if (!b.prompt?.trim() && !b.agent_config?.skill_spec && !b.agent_config?.skills?.length)
    ctx.addIssue({ code: 'custom', path: ['prompt'], message: 'give a prompt, or a skill in agent_config' });
};

export const createScheduleBody = z
  .object({
    name: fields.name,
    cron_schedule: fields.cron_schedule.optional(),
    rrule: fields.rrule.optional(),
    prompt: fields.prompt.optional(),
    enabled: fields.enabled.default(true),
    agent_config: fields.agent_config.optional(),
    agent_uid: fields.agent_uid.optional(),
    team: z.boolean().optional(),
    metadata: fields.metadata.optional(),
    mode: fields.mode.default('normal'),
    requires_approval: fields.requires_approval.optional(),
  })
  .strict()
  .superRefine(complete);

/** PUT: every field but `agent_config` (and the extensions) given; those omitted keep their value. */
export const replaceScheduleBody = z
  .object({
    name: fields.name,
    cron_schedule: fields.cron_schedule.nullish(),
    rrule: fields.rrule.nullish(),
    prompt: fields.prompt,
    enabled: fields.enabled,
    agent_config: fields.agent_config.nullish(),
    agent_uid: fields.agent_uid.nullish(),
    metadata: fields.metadata.optional(),
    mode: fields.mode.optional(),
    requires_approval: fields.requires_approval.optional(),
  })
  .strict()
  .superRefine(complete);

export const scheduleParams = z.object({ schedule_id: z.string().min(1).max(128) });

const profile = z.object({
  type: z.enum(['user', 'service_account']),
  uid: z.string(),
  display_name: z.string().optional(),
  email: z.string().optional(),
});

const firing = z.object({
  due_at: z.string(),
  run_id: z.string(),
  skipped_count: z.number().int().describe('Due times missed before this one (downtime), not fired: counted up to 100'),
  skipped: z.array(z.string()).describe('The first 100 of them'),
  error: z.string().nullable().describe('Why its run could not be started, if it could not'),
});

export const scheduleResource = z.object({
  id: z.string(),
  name: z.string(),
  cron_schedule: z.string().nullable().describe('Null when the schedule follows an rrule'),
  rrule: z.string().nullable().describe('An RFC 5545 recurrence (DTSTART;TZID=… and RRULE:), instead of cron'),
  enabled: z.boolean(),
  prompt: z.string(),
  mode: runModeSchema,
  created_at: z.string(),
  updated_at: z.string(),
  last_spawn_error: z.string().nullable(),
  agent_config: z.record(z.string(), z.unknown()).optional(),
  agent_uid: z.string().optional(),
  created_by: profile,
  updated_by: profile,
  history: z.object({
    last_ran: z.string().nullable(),
    next_run: z.string().nullable(),
    firings: z.array(firing).describe('The most recent firings, newest first'),
  }),
  next_run_time: z.string().nullable(),
  scope: z.object({ type: z.enum(['User', 'Team']), uid: z.string() }),
  metadata: z.record(z.string(), z.string()),
  requires_approval: z
    .boolean()
    .optional()
    .describe('Extension (guardrails): present (true) when its runs wait for a team admin’s approval'),
});

export type ScheduleResource = z.infer<typeof scheduleResource>;

/** Team schedules belong to their team; personal ones to their owner alone; the system sees all. */
export function canSeeSchedule(
  s: { team_uid: string | null; owner: { uid: string } },
  context: { actor: Actor; teams: Readonly<Record<string, unknown>> },
): boolean {
  if (context.actor.type === 'system') return true;
  return s.team_uid ? ownsKey(context.teams, s.team_uid) : s.owner.uid === context.actor.uid;
}

type Profile = z.infer<typeof profile>;

function toScheduleResource(doc: ScheduleDoc, profiles: ReadonlyMap<string, Profile>): ScheduleResource {
  const who = (p: ScheduleDoc['created_by']): Profile => profiles.get(p.uid) ?? p;
  return {
    id: doc.id,
    name: doc.name,
    cron_schedule: doc.cron_schedule,
    rrule: doc.rrule,
    enabled: doc.enabled,
    prompt: doc.prompt,
    mode: doc.mode,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    last_spawn_error: doc.last_spawn_error,
    ...(doc.agent_config ? { agent_config: doc.agent_config } : {}),
    ...(doc.agent_uid ? { agent_uid: doc.agent_uid } : {}),
    created_by: who(doc.created_by),
    updated_by: who(doc.updated_by),
    history: { last_ran: doc.last_due_at, next_run: doc.next_run_at, firings: doc.firings },
    ...(doc.requires_approval ? { requires_approval: true } : {}),
    next_run_time: doc.next_run_at,
    scope: doc.team_uid ? { type: 'Team', uid: doc.team_uid } : { type: 'User', uid: doc.owner.uid },
    metadata: doc.metadata,
  };
}

/** Schedules as answers: their creators and editors resolved in one read per kind of principal. */
export function scheduleAnswers(rt: Runtime) {
  const users = rt.readModel(usersProjection);
  const agents = rt.readModel(identitiesProjection);
  return async (docs: readonly ScheduleDoc[]): Promise<ScheduleResource[]> => {
    const uids = (type: string) => [
      ...new Set(
        docs
          .flatMap((d) => [d.created_by, d.updated_by])
          .filter((p) => p.type === type)
          .map((p) => p.uid),
      ),
    ];
    const [people, bots] = await Promise.all([users.getMany(uids('user')), agents.getMany(uids('service_account'))]);
    const profiles = new Map<string, Profile>();
    for (const u of people.values())
      profiles.set(u.uid, { type: 'user', uid: u.uid, display_name: u.display_name, email: u.email });
    for (const a of bots.values()) profiles.set(a.uid, { type: 'service_account', uid: a.uid, display_name: a.name });
    return docs.map((d) => toScheduleResource(d, profiles));
  };
}
