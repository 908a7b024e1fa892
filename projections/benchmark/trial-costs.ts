/**
 * What a trial's runs cost, as the cost ledger priced them: an attempt's agent run, or one of its
 * judge runs (the trial's scoring cost).
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { RunExecutionPriced, RunInferencePriced } from '../../commands/analytics/events.js';
import type { Docs } from './benchmark-run-docs.js';
import { amounts, NO_COST, type RunCost } from './tallies.js';
import { touchAttempt, touchTrial, trialOfRun } from './trial-changes.js';

type Priced = RecordedEvent<RunInferencePriced | RunExecutionPriced>;

/**
 * A run's cost after a ledger entry: the entry's usage is the run's so far, so it replaces the
 * part it prices (inference, or machine and platform time) and keeps the other.
 */
function pricedBy(e: Priced, was: RunCost): RunCost {
  if (e.type === 'RunInferencePriced') {
    const u = (e as RecordedEvent<RunInferencePriced>).data.usage;
    return {
      cost: amounts(u.inference_cost_usd, was.cost.compute, was.cost.platform),
      credits: amounts(u.inference_cost, was.credits.compute, was.credits.platform),
    };
  }
  const u = (e as RecordedEvent<RunExecutionPriced>).data.usage;
  return {
    cost: amounts(was.cost.inference, u.compute_cost_usd, u.platform_cost_usd),
    credits: amounts(was.credits.inference, u.compute_cost, u.platform_cost),
  };
}

/** A ledger entry of a trial's attempt run, or of one of its judge runs, changes what it cost. */
export async function priced(e: Priced, docs: Docs) {
  const runId = e.data.run_id;
  if (await trialOfRun(docs, runId)) {
    await touchAttempt(docs, e, runId, (a) => ({ attempt: pricedBy(e, a) }));
    return;
  }
  const judge = await docs.in('judge_runs').get(runId);
  if (!judge) return;
  await touchTrial(docs, e, judge.trial_uid, (t) => {
    const was = t.judges.find((j) => j.run_id === runId);
    const now = { run_id: runId, ...pricedBy(e, was ?? { cost: NO_COST, credits: NO_COST }) };
    return { ...t, judges: was ? t.judges.map((j) => (j.run_id === runId ? now : j)) : [...t.judges, now] };
  });
}
