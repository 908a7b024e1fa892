/**
 * Guardrails (issue #33): budgets, limits and the decisions taken under them.
 *
 * - `budget-<scope>`: a budget's definition (`BudgetSet`, `BudgetRemoved`).
 * - `budgetperiod-<scope>-<YYYY-MM>`: what a budget's calendar month (UTC) reserved, refused,
 *   charged and settled, decided on this one stream so that every process of a store sees the
 *   same room left.
 * - `limits-<scope>`: a team's or a factory's limits (`LimitsSet`).
 * - `slots-<scope>`: the runs handed to workers under a `max_concurrent_runs` limit.
 *
 * A scope is `team_<uid>`, `factory_<uid>` or `member_<team_uid>_<user_uid>`.
 */

export type BudgetScope =
  | { kind: 'team'; team_uid: string }
  | { kind: 'factory'; team_uid: string; factory_uid: string }
  | { kind: 'member'; team_uid: string; user_uid: string };

export const scopeKey = (s: BudgetScope): string =>
  s.kind === 'team'
    ? `team_${s.team_uid}`
    : s.kind === 'factory'
      ? `factory_${s.factory_uid}`
      : `member_${s.team_uid}_${s.user_uid}`;

export const budgetStream = (s: BudgetScope) => `budget-${scopeKey(s)}`;
/** `period`: `YYYY-MM`, the calendar month (UTC). */
export const budgetPeriodStream = (s: BudgetScope, period: string) => `budgetperiod-${scopeKey(s)}-${period}`;
export const limitsStream = (s: Exclude<BudgetScope, { kind: 'member' }>) => `limits-${scopeKey(s)}`;
export const slotsStream = (s: Exclude<BudgetScope, { kind: 'member' }>) => `slots-${scopeKey(s)}`;

/** The calendar month (UTC) of an instant: `YYYY-MM`. */
export const periodOf = (iso: string) => iso.slice(0, 7);

/** Thresholds notified when the body names none: half, four fifths and all of the month's amount. */
export const DEFAULT_NOTIFY_AT = [0.5, 0.8, 1] as const;

export interface BudgetFields {
  monthly_usd: number;
  per_run_usd: number | null;
  notify_at: number[];
}

export interface Limits {
  max_concurrent_runs?: number | null;
  requires_approval?: boolean | null;
  approval_timeout_minutes?: number | null;
  stuck_after_minutes?: number | null;
  max_run_minutes?: number | null;
}

export type BudgetEvent =
  | { type: 'BudgetSet'; data: BudgetFields & { scope: BudgetScope; set_at: string } }
  | { type: 'BudgetRemoved'; data: { scope: BudgetScope } };

/** Who and what a reservation is for: the run, and the budget's place. */
interface PeriodPlace {
  scope: BudgetScope;
  period: string;
  run_id: string;
}

export type BudgetPeriodEvent =
  /** The run may start: `amount_usd` is held until it ends (its per-run cap, else the estimate). */
  | { type: 'BudgetReserved'; data: PeriodPlace & { amount_usd: number; per_run_usd: number | null } }
  /** The run may not start: spent and reserved left no room for it. `refusal` counts the period's refusals (1 = the first). */
  | {
      type: 'BudgetRefused';
      data: PeriodPlace & {
        amount_usd: number;
        spent_usd: number;
        reserved_usd: number;
        monthly_usd: number;
        refusal: number;
      };
    }
  /** A reservation given back before its run was created (another budget refused it). */
  | { type: 'BudgetReleased'; data: PeriodPlace }
  /** Priced usage of the run (a cost-ledger entry, `cause`), counted as spent. */
  | {
      type: 'BudgetCharged';
      data: PeriodPlace & { usd: number; root_run_id: string; ledger_revision: number; cause_event_id: string };
    }
  /** The run ended: what it still held of its reservation is free again. */
  | { type: 'BudgetSettled'; data: PeriodPlace & { charged_usd: number } }
  /** The run's charges passed the per-run cap: it is cancelled. */
  | { type: 'BudgetRunCapReached'; data: PeriodPlace & { charged_usd: number; per_run_usd: number } }
  /** Spent reached a notification threshold (once per threshold and period). */
  | {
      type: 'BudgetThresholdReached';
      data: Omit<PeriodPlace, 'run_id'> & { fraction: number; spent_usd: number; monthly_usd: number };
    };

export type LimitsEvent = {
  type: 'LimitsSet';
  data: { scope: Exclude<BudgetScope, { kind: 'member' }>; limits: Limits };
};

/** A team's queued runs wait with no worker connected (`queuestall-<team_uid>`): one notice until it ends. */
export type QueueStallEvent =
  | { type: 'QueueStalled'; data: { team_uid: string; oldest_queued_at: string; queued_runs: number } }
  | { type: 'QueueStallEnded'; data: { team_uid: string } };

export const queueStallStream = (teamUid: string) => `queuestall-${teamUid}`;

export type SlotsEvent =
  | { type: 'SlotTaken'; data: { scope_key: string; run_id: string; factory_uid: string | null } }
  | { type: 'SlotFreed'; data: { scope_key: string; run_id: string } };

/** The public event names guardrail decisions are told under (outbound webhooks and streams). */
export const GUARDRAIL_EVENT_TYPES = [
  'budget.threshold_reached',
  'budget.exceeded',
  'run.approval_requested',
  'run.approved',
  'run.denied',
  'run.approval_expired',
] as const;
