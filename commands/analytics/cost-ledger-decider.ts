/**
 * The cost ledger of one run tree (`costs-<root_run_id>`), a decider: each usage report and each
 * ended execution of a run is priced once (a repeated one, as a replayed reaction sends it, is a
 * no-op), and the tree's cost is split evenly across the pull requests it produced.
 *
 * A run's usage report is cumulative: it replaces the run's previous one, so its entry adds the
 * difference. Inference counts for the earliest run of the run's conversation, whose tree's ledger
 * records it; machine and platform time count for the run itself, in its own tree's ledger.
 */
import type { Decider } from '../../src/kernel/decider.js';
import type { Catalogue } from '../model/events.js';
import {
  type CostKeys,
  type LedgerEntry,
  type LedgerEvent,
  type LinkedRun,
  type MachineUsage,
  type PrShare,
  type Usd,
  zeroUsd,
} from './events.js';
import { addExecution, type ExecutionTimes, priceExecution, priceUsage, roundUsd, usdByModel } from './pricing.js';
import { own, putOwn } from '../../src/own-keys.js';

/** The price list in force when the priced event happened: the `models` stream at a revision. */
export interface PriceList {
  revision: number;
  catalogue: Catalogue | null;
}

interface Cause {
  event_id: string;
  /** The revision of the run event priced in its run's stream. */
  revision: number;
  at: string;
}

/** Where a cost counts: the tree's factory and team, and the keys it groups under. */
interface Attribution {
  root_run_id: string;
  run_id: string;
  factory_uid: string | null;
  team_uid: string | null;
  keys: CostKeys;
  cause: Cause;
  price_list: PriceList;
}

export type LedgerCommand =
  | {
      type: 'PriceUsage';
      data: Attribution & { attributed_run_id: string; usage: Record<string, unknown> };
    }
  | {
      type: 'PriceExecution';
      data: Attribution & { execution_id: string; runner_id: string | null; times: ExecutionTimes };
    }
  | {
      type: 'LinkPullRequest';
      data: {
        root_run_id: string;
        factory_uid: string | null;
        team_uid: string;
        cause: Cause;
        pr: {
          pr_id: string;
          url: string;
          provider: string;
          repo_full_name: string | null;
          pr_number: number | null;
          branch: string | null;
        };
        run: LinkedRun;
      };
    }
  | { type: 'CountFollowUp'; data: { root_run_id: string; run_id: string; cause: Cause } };

interface RunLedger {
  /** The last usage report priced (run stream revision); -1 before any. */
  usage_revision: number;
  inference_usd: number;
  inference_by_model: Record<string, number>;
  executions: string[];
  machine: MachineUsage | null;
  follow_up_revision: number;
  follow_ups: number;
  prs: string[];
}

export interface LedgerState {
  total: Usd;
  inference_by_model: Record<string, number>;
  /** The pull requests the tree produced, in the order first named. */
  prs: string[];
  runs: Record<string, RunLedger>;
}

const newRun = (): RunLedger => ({
  usage_revision: -1,
  inference_usd: 0,
  inference_by_model: {},
  executions: [],
  machine: null,
  follow_up_revision: -1,
  follow_ups: 0,
  prs: [],
});

const runOf = (state: LedgerState, runId: string) => own(state.runs, runId) ?? newRun();

const withRun = (state: LedgerState, runId: string, changes: Partial<RunLedger>): LedgerState => ({
  ...state,
  runs: { ...state.runs, [runId]: { ...runOf(state, runId), ...changes } },
});

const addUsd = (a: Usd, b: Usd): Usd => ({
  inference: roundUsd(a.inference + b.inference),
  compute: roundUsd(a.compute + b.compute),
  platform: roundUsd(a.platform + b.platform),
});

/** `by` plus `delta`, per key, without keys that come to nothing. */
function addByModel(by: Record<string, number>, delta: Record<string, number>, sign = 1): Record<string, number> {
  const out = { ...by };
  for (const [k, v] of Object.entries(delta)) {
    const next = roundUsd((own(out, k) ?? 0) + sign * v);
    if (next === 0) delete out[k];
    else putOwn(out, k, next);
  }
  return out;
}

/** Each pull request's share of the tree: its cost split evenly across them. */
function sharesOf(total: Usd, byModel: Record<string, number>, prs: readonly string[]): PrShare[] {
  const n = prs.length;
  return prs.map((pr_id) => ({
    pr_id,
    usd: {
      inference: roundUsd(total.inference / n),
      compute: roundUsd(total.compute / n),
      platform: roundUsd(total.platform / n),
    },
    inference_by_model: Object.fromEntries(Object.entries(byModel).map(([m, usd]) => [m, roundUsd(usd / n)])),
  }));
}

const entryOf = (d: Attribution, state: LedgerState, delta: Usd): LedgerEntry => ({
  root_run_id: d.root_run_id,
  run_id: d.run_id,
  factory_uid: d.factory_uid,
  team_uid: d.team_uid,
  at: d.cause.at,
  cause: { event_id: d.cause.event_id, revision: d.cause.revision },
  price_list_revision: d.price_list.revision,
  credit_price_usd: d.price_list.catalogue?.rates?.credit_price_usd ?? 0,
  keys: d.keys,
  delta,
  tree_total: state.total,
  pr_shares: sharesOf(state.total, state.inference_by_model, state.prs),
});

export const ledgerDecider: Decider<LedgerCommand, LedgerEvent, LedgerState> = {
  initialState: () => ({ total: zeroUsd(), inference_by_model: {}, prs: [], runs: {} }),

  evolve: (state, event) => {
    switch (event.type) {
      case 'RunInferencePriced': {
        const d = event.data;
        const before = runOf(state, d.run_id);
        return {
          ...withRun(state, d.run_id, {
            usage_revision: d.cause.revision,
            inference_usd: d.usage.inference_cost_usd,
            inference_by_model: d.inference_usd_by_model,
          }),
          total: d.tree_total,
          inference_by_model: addByModel(
            addByModel(state.inference_by_model, before.inference_by_model, -1),
            d.inference_usd_by_model,
          ),
        };
      }
      case 'RunExecutionPriced': {
        const d = event.data;
        const run = runOf(state, d.run_id);
        return {
          ...withRun(state, d.run_id, { executions: [...run.executions, d.execution_id], machine: d.usage }),
          total: d.tree_total,
        };
      }
      case 'PullRequestLinked': {
        const d = event.data;
        const run = runOf(state, d.run.run_id);
        return {
          ...withRun(state, d.run.run_id, { prs: [...run.prs, d.pr_id] }),
          prs: state.prs.includes(d.pr_id) ? state.prs : [...state.prs, d.pr_id],
        };
      }
      case 'RunFollowUpCounted':
        return withRun(state, event.data.run_id, {
          follow_up_revision: event.data.cause.revision,
          follow_ups: event.data.follow_ups,
        });
    }
  },

  decide: (command, state) => {
    switch (command.type) {
      case 'PriceUsage': {
        const d = command.data;
        const run = runOf(state, d.run_id);
        if (d.cause.revision <= run.usage_revision) return [];
        const priced = priceUsage(d.usage, d.price_list.catalogue);
        const inference = roundUsd(priced.usage.inference_cost_usd - run.inference_usd);
        const delta = { inference, compute: 0, platform: 0 };
        const byModel = usdByModel(priced.models);
        const next: LedgerState = {
          ...state,
          total: addUsd(state.total, delta),
          inference_by_model: addByModel(addByModel(state.inference_by_model, run.inference_by_model, -1), byModel),
        };
        return [
          {
            type: 'RunInferencePriced',
            data: {
              ...entryOf(d, next, delta),
              attributed_run_id: d.attributed_run_id,
              models: priced.models,
              usage: priced.usage,
              inference_usd_by_model: byModel,
            },
          },
        ];
      }
      case 'PriceExecution': {
        const d = command.data;
        const run = runOf(state, d.run_id);
        if (run.executions.includes(d.execution_id)) return [];
        const priced = priceExecution(d.times, d.runner_id, d.price_list.catalogue);
        const delta = { inference: 0, compute: priced.compute_usd, platform: priced.platform_usd };
        const next: LedgerState = { ...state, total: addUsd(state.total, delta) };
        return [
          {
            type: 'RunExecutionPriced',
            data: {
              ...entryOf(d, next, delta),
              execution_id: d.execution_id,
              runner_id: d.runner_id,
              ...d.times,
              compute_seconds: priced.compute_seconds,
              platform_seconds: priced.platform_seconds,
              compute_usd_per_hour: priced.compute_usd_per_hour,
              platform_usd_per_hour: priced.platform_usd_per_hour,
              usage: addExecution(run.machine, priced, d.price_list.catalogue),
            },
          },
        ];
      }
      case 'LinkPullRequest': {
        const d = command.data;
        const run = runOf(state, d.run.run_id);
        if (run.prs.includes(d.pr.pr_id)) return [];
        const prs = state.prs.includes(d.pr.pr_id) ? state.prs : [...state.prs, d.pr.pr_id];
        return [
          {
            type: 'PullRequestLinked',
            data: {
              root_run_id: d.root_run_id,
              ...d.pr,
              factory_uid: d.factory_uid,
              team_uid: d.team_uid,
              at: d.cause.at,
              cause: { event_id: d.cause.event_id, revision: d.cause.revision },
              run: d.run,
              follow_ups: run.follow_ups,
              tree_total: state.total,
              pr_shares: sharesOf(state.total, state.inference_by_model, prs),
            },
          },
        ];
      }
      case 'CountFollowUp': {
        const d = command.data;
        const run = runOf(state, d.run_id);
        if (d.cause.revision <= run.follow_up_revision) return [];
        return [
          {
            type: 'RunFollowUpCounted',
            data: {
              root_run_id: d.root_run_id,
              run_id: d.run_id,
              at: d.cause.at,
              cause: { event_id: d.cause.event_id, revision: d.cause.revision },
              follow_ups: run.follow_ups + 1,
              pr_ids: run.prs,
            },
          },
        ];
      }
    }
  },
};
