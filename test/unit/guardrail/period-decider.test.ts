/**
 * A budget's month: reservations while there is room, refusals after, the estimate of a run
 * without a per-run cap, charges using up reservations, settlement, the per-run cap, thresholds
 * once each, and a cost-ledger entry charged once.
 */
import { describe, expect, it } from 'vitest';
import type { BudgetPeriodEvent, BudgetScope } from '../../../commands/guardrail/events.js';
import { periodDecider } from '../../../commands/guardrail/period-decider.js';
import { slotsDecider } from '../../../commands/guardrail/slots-decider.js';
import { deciderSpec, fold } from '../../helpers/decider-spec.js';

const scope: BudgetScope = { kind: 'team', team_uid: 't-1' };
const period = '2026-03';
const place = (run_id: string) => ({ scope, period, run_id });
const budget = (monthly_usd: number, per_run_usd: number | null = null, notify_at = [0.5, 1]) => ({
  monthly_usd,
  per_run_usd,
  notify_at,
});
const reserved = (run_id: string, amount_usd: number, per_run_usd: number | null = null): BudgetPeriodEvent => ({
  type: 'BudgetReserved',
  data: { ...place(run_id), amount_usd, per_run_usd },
});
const charge = (run_id: string, usd: number, ledger_revision: number, b = budget(10, 2)) => ({
  type: 'Charge' as const,
  data: {
    ...place(run_id),
    usd,
    root_run_id: run_id,
    ledger_revision,
    cause_event_id: `e${ledger_revision}`,
    budget: b,
  },
});
const spec = deciderSpec(periodDecider);

describe('reserving', () => {
  it('reserves the per-run cap while it fits, then refuses naming what is spent and reserved', () => {
    spec
      .given([])
      .when({ type: 'Reserve', data: { ...place('r1'), budget: budget(2, 1), floor_usd: 1 } })
      .then([{ type: 'BudgetReserved', data: { amount_usd: 1 } }]);
    spec
      .given([reserved('r1', 1), reserved('r2', 1)])
      .when({ type: 'Reserve', data: { ...place('r3'), budget: budget(2, 1), floor_usd: 1 } })
      .then([{ type: 'BudgetRefused', data: { spent_usd: 0, reserved_usd: 2, monthly_usd: 2, refusal: 1 } }]);
  });

  it('estimates a run without a cap at the recent average, never below the floor', () => {
    const settled = (run_id: string, usd: number): BudgetPeriodEvent[] => [
      reserved(run_id, 1),
      {
        type: 'BudgetCharged',
        data: { ...place(run_id), usd, root_run_id: run_id, ledger_revision: 0, cause_event_id: run_id },
      },
      { type: 'BudgetSettled', data: { ...place(run_id), charged_usd: usd } },
    ];
    spec
      .given([...settled('a', 3), ...settled('b', 5)])
      .when({ type: 'Reserve', data: { ...place('c'), budget: budget(100), floor_usd: 1 } })
      .then([{ type: 'BudgetReserved', data: { amount_usd: 4 } }]);
    spec
      .given(settled('a', 0.2))
      .when({ type: 'Reserve', data: { ...place('c'), budget: budget(100), floor_usd: 1 } })
      .then([{ type: 'BudgetReserved', data: { amount_usd: 1 } }]);
  });

  it('does nothing for a run holding a reservation; a settled run (resumed) reserves again', () => {
    spec
      .given([reserved('r1', 1)])
      .when({ type: 'Reserve', data: { ...place('r1'), budget: budget(5, 1), floor_usd: 1 } })
      .thenNothingHappened();
    spec
      .given([reserved('r1', 1), { type: 'BudgetSettled', data: { ...place('r1'), charged_usd: 0 } }])
      .when({ type: 'Reserve', data: { ...place('r1'), budget: budget(5, 1), floor_usd: 1 } })
      .then([{ type: 'BudgetReserved' }]);
  });
});

describe('charging', () => {
  it('uses the reservation up first, and the end frees what is left', () => {
    const events: BudgetPeriodEvent[] = [
      reserved('r1', 2, 2),
      ...periodDecider.decide(charge('r1', 0.5, 0), fold(periodDecider, [reserved('r1', 2, 2)]), {
        now: '',
        actor: { type: 'system', uid: 's' },
        teams: {},
      }),
    ];
    expect(fold(periodDecider, events)).toMatchObject({ spent: 0.5, held: 1.5 });
    const settledState = fold(periodDecider, [
      ...events,
      { type: 'BudgetSettled', data: { ...place('r1'), charged_usd: 0.5 } },
    ]);
    expect(settledState).toMatchObject({ spent: 0.5, held: 0 });
  });

  it('charges a ledger entry once, and passes the per-run cap once', () => {
    const before = [reserved('r1', 2, 2)];
    spec
      .given(before)
      .when(charge('r1', 2.5, 3))
      .then([
        { type: 'BudgetCharged', data: { usd: 2.5 } },
        { type: 'BudgetRunCapReached', data: { charged_usd: 2.5, per_run_usd: 2 } },
      ]);
    const after: BudgetPeriodEvent[] = [
      ...before,
      {
        type: 'BudgetCharged',
        data: { ...place('r1'), usd: 2.5, root_run_id: 'r1', ledger_revision: 3, cause_event_id: 'e3' },
      },
      { type: 'BudgetRunCapReached', data: { ...place('r1'), charged_usd: 2.5, per_run_usd: 2 } },
    ];
    spec
      .given(after)
      .when(charge('r1', 2.5, 3))
      .thenNothingHappened();
    spec
      .given(after)
      .when(charge('r1', 1, 4))
      .then([{ type: 'BudgetCharged' }]);
  });

  it('notifies each threshold once a month', () => {
    spec
      .given([])
      .when(charge('r1', 6, 0, budget(10, null, [0.5, 1])))
      .then([{ type: 'BudgetCharged' }, { type: 'BudgetThresholdReached', data: { fraction: 0.5, spent_usd: 6 } }]);
    spec
      .given([
        {
          type: 'BudgetCharged',
          data: { ...place('r1'), usd: 6, root_run_id: 'r1', ledger_revision: 0, cause_event_id: 'e' },
        },
        { type: 'BudgetThresholdReached', data: { scope, period, fraction: 0.5, spent_usd: 6, monthly_usd: 10 } },
      ])
      .when(charge('r2', 4, 0, budget(10, null, [0.5, 1])))
      .then([{ type: 'BudgetCharged' }, { type: 'BudgetThresholdReached', data: { fraction: 1, spent_usd: 10 } }]);
  });
});

describe('concurrency places', () => {
  const slots = deciderSpec(slotsDecider);
  const take = (run_id: string, ended: string[] = []) => ({
    type: 'TakeSlot' as const,
    data: { scope_key: 'team_t-1', run_id, factory_uid: null, max: 1, ended },
  });
  const taken = { type: 'SlotTaken' as const, data: { scope_key: 'team_t-1', run_id: 'a', factory_uid: null } };

  it('takes a place while one is free, and none when the limit is reached', () => {
    slots
      .given([])
      .when(take('a'))
      .then([{ type: 'SlotTaken', data: { run_id: 'a' } }]);
    slots.given([taken]).when(take('b')).thenNothingHappened();
    slots.given([taken]).when(take('a')).thenNothingHappened();
  });

  it('frees the places of runs the claim found ended, then takes one', () => {
    slots
      .given([taken])
      .when(take('b', ['a']))
      .then([
        { type: 'SlotFreed', data: { run_id: 'a' } },
        { type: 'SlotTaken', data: { run_id: 'b' } },
      ]);
  });
});
