/**
 * Cost-ledger entries (commands/analytics) made by hand for read-model tests: a run's usage
 * report and an ended execution, priced, with the run's usage so far and what the entry adds.
 * Credits are at $0.01.
 */
import type { LedgerEntry, RunExecutionPriced, RunInferencePriced, Usd } from '../../commands/analytics/events.js';

const CREDIT_PRICE_USD = 0.01;
const credits = (usd: number) => Math.round((usd / CREDIT_PRICE_USD) * 1e9) / 1e9;

const entry = (run_id: string, at: string, delta: Usd): LedgerEntry => ({
  root_run_id: run_id,
  run_id,
  factory_uid: 'f-1',
  team_uid: 't-1',
  at,
  cause: { event_id: `cause-${run_id}-${at}`, revision: 0 },
  price_list_revision: 0,
  credit_price_usd: CREDIT_PRICE_USD,
  keys: { source: 'API', user: 'u-1', agent: 'a-1', model: 'm' },
  delta,
  tree_total: delta,
  pr_shares: [],
});

/** A usage report of `run_id` at `at`: the run's inference is now `usd`, which adds `delta`. */
export const inferencePriced = (run_id: string, at: string, usd: number, delta = usd): RunInferencePriced => ({
  type: 'RunInferencePriced',
  data: {
    ...entry(run_id, at, { inference: delta, compute: 0, platform: 0 }),
    attributed_run_id: run_id,
    models: [],
    usage: {
      inference_cost: credits(usd),
      inference_cost_usd: usd,
      total_tokens: 0,
      inference_cost_breakdown_usd: {
        input_cost_usd: usd,
        input_cache_read_cost_usd: 0,
        input_cache_write_cost_usd: 0,
        output_cost_usd: 0,
      },
      model_token_usage: [],
    },
    inference_usd_by_model: { m: usd },
  },
});

/**
 * An execution of `run_id` ended at `at`, adding `delta` (machine and platform time); `usage` is
 * what the run's executions so far cost.
 */
export const executionPriced = (
  run_id: string,
  at: string,
  usage: { compute: number; platform: number },
  delta: { compute: number; platform: number } = usage,
): RunExecutionPriced => ({
  type: 'RunExecutionPriced',
  data: {
    ...entry(run_id, at, { inference: 0, ...delta }),
    execution_id: `x-${run_id}-${at}`,
    runner_id: null,
    claimed_at: null,
    started_at: null,
    ended_at: at,
    compute_seconds: 0,
    platform_seconds: 0,
    compute_usd_per_hour: 0,
    platform_usd_per_hour: 0,
    usage: {
      compute_cost: credits(usage.compute),
      compute_cost_usd: usage.compute,
      platform_cost: credits(usage.platform),
      platform_cost_usd: usage.platform,
      compute_seconds: 0,
      platform_seconds: 0,
    },
  },
});
