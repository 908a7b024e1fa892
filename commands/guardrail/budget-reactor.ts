/**
 * The guardrails' reactions (reactor `guardrails`, its own checkpoint):
 * - each cost-ledger entry (priced usage or an ended execution) is charged to every budget that
 *   pays for its run (and is set), in the month it was priced; a charge that passes the run's per-run cap
 *   cancels the run, and its worker is told as with any cancel;
 * - a run that ends settles its reservations (what it did not spend is free again) and gives
 *   back its places under the concurrency limits.
 * Every command names the event it comes from, and the period decides each once.
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { DomainError } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { reactionContext, reactor } from '../../src/projector/reactor.js';
import type { Runtime } from '../../src/runtime.js';
import type { LedgerEntry, RunExecutionPriced, RunInferencePriced } from '../analytics/events.js';
import { runDecider, runState } from '../run/public.js';
import { type RunEvent, runStream } from '../run/events.js';
import { budgetDecider } from './budget-decider.js';
import { contended } from './contended.js';
import { type RunPayer, payingScopes } from './budget-guard.js';
import { freeSlots } from './slot-guard.js';
import { type BudgetScope, budgetPeriodStream, budgetStream, periodOf, scopeKey } from './events.js';
import { type PeriodCommand, periodDecider, roundUsd } from './period-decider.js';

/** Who pays for a run: its own facts, with its tree's factory when it has none. */
async function payerOf(rt: Runtime, runId: string): Promise<(RunPayer & { created_at: string | null }) | null> {
  const run = await runState(rt, runId);
  if (!run) return null;
  const root = run.root_run_id === runId ? run : await runState(rt, run.root_run_id);
  const [first] = await rt.events.readStream(runStream(runId), { maxCount: 1 });
  const c = run.created;
  return {
    run_id: runId,
    team_uid: c.team_uid,
    factory_uid: c.factory_uid ?? root?.created.factory_uid ?? null,
    creator: c.creator,
    created_at: first?.metadata.occurred_at ?? null,
  };
}

const onPeriod = (rt: Runtime, scope: BudgetScope, period: string, command: PeriodCommand, context: CommandContext) =>
  contended(`${command.data.run_id}:${scopeKey(scope)}`, () =>
    rt.handle(budgetPeriodStream(scope, period), periodDecider, command, context),
  );

async function charge(event: RecordedEvent<RunInferencePriced | RunExecutionPriced>, rt: Runtime): Promise<void> {
  const entry: LedgerEntry = event.data;
  const usd = roundUsd(entry.delta.inference + entry.delta.compute + entry.delta.platform);
  const payer = usd === 0 ? null : await payerOf(rt, entry.run_id);
  if (!payer) return;
  const period = periodOf(entry.at);
  const context = reactionContext(event, rt.clock.now());
  let capped: string | null = null;
  for (const scope of payingScopes(payer)) {
    const budget = await rt.state(budgetDecider, budgetStream(scope));
    // Spend counts from when a budget is set: scopes without one are not written to.
    if (budget.status !== 'live') continue;
    const data = {
      scope,
      period,
      run_id: entry.run_id,
      usd,
      root_run_id: entry.root_run_id,
      ledger_revision: Number(event.revision),
      cause_event_id: event.id,
      budget,
    };
    const { events } = await onPeriod(rt, scope, period, { type: 'Charge', data }, context);
    const cap = events.find((e) => e.type === 'BudgetRunCapReached');
    if (cap?.type === 'BudgetRunCapReached')
      capped ??= `the run passed its per-run budget cap ($${cap.data.charged_usd} of $${cap.data.per_run_usd})`;
  }
  if (capped) await cancelOverCap(rt, entry.run_id, capped, context);
}

/** Cancels a run over its cap; one that ended meanwhile stays as it ended. */
async function cancelOverCap(rt: Runtime, runId: string, reason: string, context: CommandContext): Promise<void> {
  try {
    await contended(`${runId}:cap`, () =>
      rt.handle(runStream(runId), runDecider, { type: 'CancelRun', data: { run_id: runId, reason } }, context),
    );
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    rt.log.info({ run_id: runId, err: error }, 'a run over its per-run cap could not be cancelled');
  }
}

/** A run that ended gives back what it held, in the month it started and the month it ended. */
type Ended = Extract<RunEvent, { type: 'RunFinished' | 'RunCancelled' | 'RunWorkerLost' }>;

async function settle(event: RecordedEvent<Ended>, rt: Runtime): Promise<void> {
  const e = event as Ended;
  if (e.type === 'RunWorkerLost' && e.data.requeued) return;
  const runId = event.data.run_id;
  const payer = await payerOf(rt, runId);
  if (!payer) return;
  const context = reactionContext(event, rt.clock.now());
  const periods = new Set([
    periodOf(event.metadata.occurred_at),
    ...(payer.created_at ? [periodOf(payer.created_at)] : []),
  ]);
  for (const scope of payingScopes(payer))
    for (const period of periods)
      await onPeriod(rt, scope, period, { type: 'Settle', data: { scope, period, run_id: runId } }, context);
  const run = (await runState(rt, runId))!.created;
  await freeSlots(
    rt,
    { run_id: runId, executing_team_uid: run.executing_team_uid, factory_uid: payer.factory_uid },
    context,
  );
}

export const budgetReactor = reactor<RunInferencePriced | RunExecutionPriced | RunEvent, Runtime>({
  name: 'guardrails',
  // Charges and settlements are keyed by the ledger entry and the run: reacting again to the cause
  // of the last one changes nothing.
  replay: 'after-last-effect',
  on: {
    RunInferencePriced: charge,
    RunExecutionPriced: charge,
    RunFinished: settle,
    RunCancelled: settle,
    RunWorkerLost: settle,
  },
});
