/**
 * PUT/GET of a team's and a factory's limits. Team admins write; members read. A PUT replaces the
 * limits: a field left out (or null) takes its default (LIMIT_DEFAULTS, docs/features/guardrails.md).
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { commandContext } from '../../src/http/context.js';
import { uidParam } from '../../src/http/schemas.js';
import type { Runtime } from '../../src/runtime.js';
import type { Api } from '../../src/http/api.js';
import { liveFactory } from '../factory/public.js';
import { callersTeam } from './budget-routes.js';
import { type BudgetScope, type Limits, limitsStream } from './events.js';
import { limitsDecider } from './limits-decider.js';

type LimitScope = Exclude<BudgetScope, { kind: 'member' }>;

const minutes = (max: number) => z.number().int().min(1).max(max).nullable().optional();

const limitsBody = z
  .object({
    max_concurrent_runs: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .nullable()
      .optional()
      .describe('Runs handed to workers at once; more wait in QUEUED (default: no limit)'),
    requires_approval: z
      .boolean()
      .nullable()
      .optional()
      .describe('Root runs wait for an admin’s approval (default false)'),
    approval_timeout_minutes: minutes(30 * 24 * 60).describe(
      'A pending approval expires, cancelling its run (default 1440)',
    ),
    stuck_after_minutes: minutes(7 * 24 * 60).describe(
      'A run in progress without progress this long ends ERROR (default 30)',
    ),
    max_run_minutes: minutes(30 * 24 * 60).describe('A run in progress this long ends ERROR (default 1440)'),
  })
  .strict();

const limitsAnswer = z.object({
  max_concurrent_runs: z.number().nullable(),
  requires_approval: z.boolean().nullable(),
  approval_timeout_minutes: z.number().nullable(),
  stuck_after_minutes: z.number().nullable(),
  max_run_minutes: z.number().nullable(),
});

const toAnswer = (l: Limits): z.infer<typeof limitsAnswer> => ({
  max_concurrent_runs: l.max_concurrent_runs ?? null,
  requires_approval: l.requires_approval ?? null,
  approval_timeout_minutes: l.approval_timeout_minutes ?? null,
  stuck_after_minutes: l.stuck_after_minutes ?? null,
  max_run_minutes: l.max_run_minutes ?? null,
});

const places: Array<{
  url: string;
  params: z.ZodObject;
  scope: (rt: Runtime, req: FastifyRequest) => Promise<LimitScope>;
}> = [
  {
    url: '/teams/:team_uid/limits',
    params: z.object({ team_uid: uidParam }),
    scope: async (_rt, req) => ({
      kind: 'team',
      team_uid: callersTeam(req, (req.params as { team_uid: string }).team_uid),
    }),
  },
  {
    url: '/factory/:factory_uid/limits',
    params: z.object({ factory_uid: uidParam }),
    scope: async (rt, req) => {
      const factory_uid = (req.params as { factory_uid: string }).factory_uid;
      const factory = await liveFactory(rt, factory_uid, commandContext(req));
      return { kind: 'factory', team_uid: factory.team_uid, factory_uid };
    },
  },
];

export default function limitsRoutes(api: Api, rt: Runtime): void {
  const tags = ['guardrails'];
  for (const { url, params, scope: scopeOf } of places) {
    api.put(url, { schema: { params, body: limitsBody, response: { 200: limitsAnswer }, tags } }, async (req) => {
      const scope = await scopeOf(rt, req);
      const context = { ...commandContext(req), team_uid: scope.team_uid };
      const { state } = await rt.execute(
        limitsStream(scope),
        limitsDecider,
        { type: 'SetLimits', data: { scope, limits: toAnswer(req.body) } },
        context,
      );
      return toAnswer(state.limits);
    });
    api.get(url, { schema: { params, response: { 200: limitsAnswer }, tags } }, async (req) => {
      const scope = await scopeOf(rt, req);
      return toAnswer((await rt.state(limitsDecider, limitsStream(scope))).limits);
    });
  }
}
