/**
 * One budget's calendar month (`budgetperiod-<scope>-<YYYY-MM>`): the reservations of the runs
 * it lets start, the refusals, the priced usage charged to it, and the notices it owes. Every
 * start is decided here, on the stream's revision, so two processes never both take the last room.
 *
 * Held (`reserved_usd`) is what running runs may still spend of their reservations: a charge uses
 * its run's reservation up first, and an ended run gives back what it did not use.
 */
import type { Decider } from '../../src/kernel/decider.js';
import { own } from '../../src/own-keys.js';
import type { BudgetFields, BudgetPeriodEvent, BudgetScope } from './events.js';

/** Settled runs' costs kept for the estimate of a run without a per-run cap. */
const RECENT_RUNS = 20;
const EPSILON = 1e-9;

export const roundUsd = (usd: number) => Math.round(usd * 1e6) / 1e6;

interface RunEntry {
  /** What the run may still spend of its reservation. */
  hold: number;
  charged: number;
  settled: boolean;
  capped: boolean;
  per_run_usd: number | null;
}

export interface PeriodState {
  spent: number;
  held: number;
  refusals: number;
  notified: number[];
  recent: number[];
  runs: Record<string, RunEntry>;
  /** The last cost-ledger revision charged, per run tree. */
  trees: Record<string, number>;
}

interface Place {
  scope: BudgetScope;
  period: string;
  run_id: string;
}

export type PeriodCommand =
  | { type: 'Reserve'; data: Place & { budget: BudgetFields; floor_usd: number } }
  | { type: 'Release'; data: Place }
  | {
      type: 'Charge';
      data: Place & {
        usd: number;
        root_run_id: string;
        ledger_revision: number;
        cause_event_id: string;
        budget: BudgetFields | null;
      };
    }
  | { type: 'Settle'; data: Place };

const newEntry = (per_run_usd: number | null): RunEntry => ({
  hold: 0,
  charged: 0,
  settled: false,
  capped: false,
  per_run_usd,
});

/** What a run without a per-run cap reserves: the recent average, never below the floor. */
function estimateUsd(state: PeriodState, budget: BudgetFields, floor: number): number {
  if (budget.per_run_usd !== null) return budget.per_run_usd;
  const { recent } = state;
  const average = recent.length ? recent.reduce((a, b) => a + b, 0) / recent.length : 0;
  return roundUsd(Math.max(floor, average));
}

function evolveRun(state: PeriodState, runId: string, change: (run: RunEntry) => RunEntry): PeriodState {
  const before = own(state.runs, runId) ?? newEntry(null);
  const after = change(before);
  return { ...state, held: roundUsd(state.held - before.hold + after.hold), runs: { ...state.runs, [runId]: after } };
}

export const periodDecider: Decider<PeriodCommand, BudgetPeriodEvent, PeriodState> = {
  initialState: () => ({ spent: 0, held: 0, refusals: 0, notified: [], recent: [], runs: {}, trees: {} }),

  evolve: (state, event) => {
    switch (event.type) {
      case 'BudgetReserved':
        return evolveRun(state, event.data.run_id, () => ({
          ...newEntry(event.data.per_run_usd),
          hold: event.data.amount_usd,
        }));
      case 'BudgetRefused':
        return { ...state, refusals: event.data.refusal };
      case 'BudgetReleased':
        return evolveRun(state, event.data.run_id, (r) => ({ ...r, hold: 0, settled: true }));
      case 'BudgetCharged': {
        const { usd, root_run_id, ledger_revision } = event.data;
        const next = evolveRun(state, event.data.run_id, (r) => ({
          ...r,
          charged: roundUsd(r.charged + usd),
          hold: roundUsd(Math.max(0, r.hold - usd)),
        }));
        return {
          ...next,
          spent: roundUsd(state.spent + usd),
          trees: { ...state.trees, [root_run_id]: ledger_revision },
        };
      }
      case 'BudgetSettled': {
        const next = evolveRun(state, event.data.run_id, (r) => ({ ...r, hold: 0, settled: true }));
        return { ...next, recent: [...state.recent, event.data.charged_usd].slice(-RECENT_RUNS) };
      }
      case 'BudgetRunCapReached':
        return evolveRun(state, event.data.run_id, (r) => ({ ...r, capped: true }));
      case 'BudgetThresholdReached':
        return { ...state, notified: [...state.notified, event.data.fraction] };
    }
  },

  decide: (command, state) => {
    const { scope, period, run_id } = command.data;
    const place = { scope, period, run_id };
    const run = own(state.runs, run_id);
    switch (command.type) {
      case 'Reserve': {
        // Held already (a reaction seen twice): nothing more. Settled: a resumed run reserves again.
        if (run && !run.settled) return [];
        const { budget, floor_usd } = command.data;
        const amount_usd = estimateUsd(state, budget, floor_usd);
        if (state.spent + state.held + amount_usd > budget.monthly_usd + EPSILON) {
          const refused = { amount_usd, spent_usd: state.spent, reserved_usd: state.held };
          return [
            {
              type: 'BudgetRefused',
              data: { ...place, ...refused, monthly_usd: budget.monthly_usd, refusal: state.refusals + 1 },
            },
          ];
        }
        return [{ type: 'BudgetReserved', data: { ...place, amount_usd, per_run_usd: budget.per_run_usd } }];
      }
      case 'Release':
        return run && !run.settled ? [{ type: 'BudgetReleased', data: place }] : [];
      case 'Settle':
        return run && !run.settled ? [{ type: 'BudgetSettled', data: { ...place, charged_usd: run.charged } }] : [];
      case 'Charge':
        return chargeEvents(state, command.data);
    }
  },
};

type ChargeData = Extract<PeriodCommand, { type: 'Charge' }>['data'];

/** The charge, and what it brings about: thresholds passed, the run's cap passed. */
function chargeEvents(state: PeriodState, d: ChargeData): BudgetPeriodEvent[] {
  const { scope, period, run_id, usd, root_run_id, ledger_revision, cause_event_id, budget } = d;
  if (ledger_revision <= (own(state.trees, root_run_id) ?? -1)) return [];
  const events: BudgetPeriodEvent[] = [
    { type: 'BudgetCharged', data: { scope, period, run_id, usd, root_run_id, ledger_revision, cause_event_id } },
  ];
  const spent_usd = roundUsd(state.spent + usd);
  const run = own(state.runs, run_id) ?? newEntry(budget?.per_run_usd ?? null);
  const charged_usd = roundUsd(run.charged + usd);
  const cap = run.per_run_usd ?? budget?.per_run_usd ?? null;
  if (cap !== null && !run.capped && !run.settled && charged_usd > cap + EPSILON)
    events.push({ type: 'BudgetRunCapReached', data: { scope, period, run_id, charged_usd, per_run_usd: cap } });
  if (!budget) return events;
  for (const fraction of [...budget.notify_at].sort((a, b) => a - b)) {
    if (state.notified.includes(fraction) || spent_usd + EPSILON < fraction * budget.monthly_usd) continue;
    events.push({
      type: 'BudgetThresholdReached',
      data: { scope, period, fraction, spent_usd, monthly_usd: budget.monthly_usd },
    });
  }
  return events;
}
