/**
 * PUT/GET/DELETE of the team's, a factory's and a member's budget. Team admins write; members
 * read. The answer is read from the budget's streams (its definition and this month's period),
 * where every start is decided, so it shows exactly what the next start would meet.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { commandContext } from '../../src/http/context.js';
import { noContent, uidParam } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import type { Api } from '../../src/http/api.js';
import { own, ownsKey } from '../../src/own-keys.js';
import { liveFactory } from '../factory/public.js';
import { teamDecider } from '../team/public.js';
import { teamStream } from '../team/events.js';
import { budgetDecider } from './budget-decider.js';
import { budgetAnswer, budgetBody, fieldsOf, toBudgetResource } from './budget-resource.js';
import { type BudgetScope, budgetPeriodStream, budgetStream, periodOf } from './events.js';
import { periodDecider } from './period-decider.js';

type Params = Record<string, string>;

/** The team of the path, when the caller is in it (else 404: no team of theirs). */
export function callersTeam(req: FastifyRequest, teamUid: string): string {
  if (!ownsKey(commandContext(req).teams, teamUid)) throw new NotFound('team', teamUid);
  return teamUid;
}

const scopes: Array<{
  url: string;
  params: z.ZodObject;
  scope: (rt: Runtime, req: FastifyRequest) => Promise<BudgetScope>;
}> = [
  {
    url: '/teams/:team_uid/budget',
    params: z.object({ team_uid: uidParam }),
    scope: async (_rt, req) => ({ kind: 'team', team_uid: callersTeam(req, (req.params as Params).team_uid!) }),
  },
  {
    url: '/factory/:factory_uid/budget',
    params: z.object({ factory_uid: uidParam }),
    scope: async (rt, req) => {
      const factory_uid = (req.params as Params).factory_uid!;
      const factory = await liveFactory(rt, factory_uid, commandContext(req));
      return { kind: 'factory', team_uid: factory.team_uid, factory_uid };
    },
  },
  {
    url: '/teams/:team_uid/members/:user_uid/budget',
    params: z.object({ team_uid: uidParam, user_uid: uidParam }),
    scope: async (rt, req) => {
      const { team_uid, user_uid } = req.params as Params;
      const team = await rt.state(teamDecider, teamStream(callersTeam(req, team_uid!)));
      if (team.status !== 'live' || !own(team.members, user_uid!)) throw new NotFound('member', user_uid);
      return { kind: 'member', team_uid: team_uid!, user_uid: user_uid! };
    },
  },
];

async function answer(rt: Runtime, scope: BudgetScope, now: string) {
  const budget = await rt.state(budgetDecider, budgetStream(scope));
  if (budget.status !== 'live') throw new NotFound('budget');
  const period = periodOf(now);
  return toBudgetResource(budget, period, await rt.state(periodDecider, budgetPeriodStream(scope, period)));
}

export default function budgetRoutes(api: Api, rt: Runtime): void {
  const tags = ['guardrails'];
  for (const { url, params, scope: scopeOf } of scopes) {
    api.put(url, { schema: { params, body: budgetBody, response: { 200: budgetAnswer }, tags } }, async (req) => {
      const scope = await scopeOf(rt, req);
      const context = { ...commandContext(req), team_uid: scope.team_uid };
      const data = { ...fieldsOf(req.body), scope };
      await rt.execute(budgetStream(scope), budgetDecider, { type: 'SetBudget', data }, context);
      return answer(rt, scope, context.now);
    });
    api.get(url, { schema: { params, response: { 200: budgetAnswer }, tags } }, async (req) =>
      answer(rt, await scopeOf(rt, req), req.now),
    );
    api.delete(url, { schema: { params, response: { 204: noContent() }, tags } }, async (req, reply) => {
      const scope = await scopeOf(rt, req);
      const context = { ...commandContext(req), team_uid: scope.team_uid };
      await rt.execute(budgetStream(scope), budgetDecider, { type: 'RemoveBudget', data: { scope } }, context);
      return reply.code(204).send(null);
    });
  }
}
