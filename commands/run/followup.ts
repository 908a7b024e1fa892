/**
 * Sending a follow-up to a run, shared by the run's and the conversation's follow-up routes. A
 * follow-up that resumes an ended run starts a new execution: like any start, it first reserves
 * on the budgets that pay for the run (refused `budget_exceeded` when out of room), and gives the
 * reservations back should the follow-up not resume after all.
 */
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { periodOf } from '../guardrail/events.js';
import { releaseBudgets, reserveBudgets } from '../guardrail/public.js';
import { canView } from './resource.js';
import { followupRoute, type RunCommand, runDecider, type RunView } from './run-decider.js';
import { runStream } from './events.js';

type FollowupData = Extract<RunCommand, { type: 'SendFollowup' }>['data'];

/** Who pays for a resumed run: as at its creation, its tree's factory when it has none. */
async function payerOf(rt: Runtime, run: RunView) {
  const root = run.root_run_id === run.run_id ? run : await rt.state(runDecider, runStream(run.root_run_id));
  const treeFactory = root.status === 'live' ? root.created.factory_uid : null;
  return { ...run.created, factory_uid: run.created.factory_uid ?? treeFactory };
}

export async function sendFollowup(rt: Runtime, data: FollowupData, context: CommandContext) {
  const run = await rt.state(runDecider, runStream(data.run_id));
  const resumes = run.status === 'live' && canView(run, context) && followupRoute(run, context.now) === 'new_execution';
  const reserved = resumes ? await reserveBudgets(rt, await payerOf(rt, run), context) : [];
  const giveBack = () => releaseBudgets(rt, data.run_id, reserved, periodOf(context.now), context);
  try {
    const handled = await rt.execute(runStream(data.run_id), runDecider, { type: 'SendFollowup', data }, context);
    if (!handled.events.some((e) => e.type === 'RunResumed')) await giveBack();
    return handled;
  } catch (error) {
    await giveBack();
    throw error;
  }
}
