/**
 * POST /agent/runs/{run_id}/approve and /deny: a team admin (a person; agents cannot) decides a
 * run waiting for approval. Approving reserves the run's budgets first, so an approval with no
 * room is refused `budget_exceeded` and the run waits on; denying cancels the run. Who decided,
 * and when, is in the run's history and on its `approval`.
 */
import { z } from 'zod';
import { commandContext } from '../../src/http/context.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { Conflict, Forbidden, NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import type { Api } from '../../src/http/api.js';
import { own } from '../../src/own-keys.js';
import { canView, runDecider, runParams, runStateSchema, type RunView } from '../run/public.js';
import { periodOf } from './events.js';
import { releaseBudgets, reserveBudgets } from './budget-guard.js';
import { runStream } from '../run/events.js';

const decided = z.object({
  run_id: z.string(),
  state: runStateSchema,
  approval: z.object({
    state: z.enum(['pending', 'approved', 'denied', 'expired']),
    decided_by: z.object({ type: z.enum(['user', 'service_account']), uid: z.string() }).nullable(),
    decided_at: z.string().nullable(),
  }),
});

const denyBody = z
  .object({ reason: z.string().max(2000).optional() })
  .strict()
  .optional();

/**
 * The run waiting for the caller's decision: visible, pending, and the caller an admin of its team.
 * The decider checks the same again; asking first keeps a refused caller from reserving budgets.
 */
async function pendingRun(rt: Runtime, runId: string, context: CommandContext): Promise<RunView> {
  const run = await rt.state(runDecider, runStream(runId));
  if (run.status !== 'live' || !canView(run, context)) throw new NotFound('run', runId);
  const team = run.team_uid ?? run.executing_team_uid;
  if (context.actor.type !== 'user' || own(context.teams, team) !== 'admin')
    throw new Forbidden('only team admins can approve or deny runs');
  if (run.approval?.state !== 'pending' || run.state !== 'QUEUED')
    throw new Conflict(`run ${runId} is not waiting for approval`, 'not_pending_approval');
  return run;
}

const answerOf = (run: RunView) => ({
  run_id: run.run_id,
  state: run.state,
  approval: {
    state: run.approval!.state,
    decided_by: run.approval!.decided_by,
    decided_at: run.approval!.decided_at,
  },
});

export default function approvalRoutes(api: Api, rt: Runtime): void {
  const tags = ['guardrails'];
  api.post(
    '/agent/runs/:run_id/approve',
    { schema: { params: runParams, response: { 200: decided }, tags } },
    async (req) => {
      const context = commandContext(req);
      const run = await pendingRun(rt, req.params.run_id, context);
      const parent = run.created.parent_run_id ? await rt.state(runDecider, runStream(run.root_run_id)) : null;
      const payer = {
        ...run.created,
        factory_uid: run.created.factory_uid ?? (parent?.status === 'live' ? parent.created.factory_uid : null),
      };
      const reserved = await reserveBudgets(rt, payer, context);
      try {
        const command = { type: 'DecideApproval' as const, data: { run_id: run.run_id, approve: true, reason: null } };
        const { state } = await rt.execute(runStream(run.run_id), runDecider, command, context);
        return answerOf(state as RunView);
      } catch (error) {
        await releaseBudgets(rt, run.run_id, reserved, periodOf(context.now), context);
        throw error;
      }
    },
  );

  api.post(
    '/agent/runs/:run_id/deny',
    { schema: { params: runParams, body: denyBody, response: { 200: decided }, tags } },
    async (req) => {
      const context = commandContext(req);
      const run = await pendingRun(rt, req.params.run_id, context);
      const data = { run_id: run.run_id, approve: false, reason: req.body?.reason ?? null };
      const { state } = await rt.execute(runStream(run.run_id), runDecider, { type: 'DecideApproval', data }, context);
      return answerOf(state as RunView);
    },
  );
}
