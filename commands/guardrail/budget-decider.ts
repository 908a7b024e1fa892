/**
 * A budget's definition (`budget-<scope>`): team admins set and remove it; members read it.
 */
import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import { Forbidden, NotFound } from '../../src/kernel/errors.js';
import { own } from '../../src/own-keys.js';
import type { BudgetEvent, BudgetFields, BudgetScope } from './events.js';

export type BudgetCommand =
  | { type: 'SetBudget'; data: BudgetFields & { scope: BudgetScope } }
  | { type: 'RemoveBudget'; data: { scope: BudgetScope } };

export type BudgetState = { status: 'none' } | ({ status: 'live'; scope: BudgetScope; set_at: string } & BudgetFields);

/** Only an admin of the budget's team changes it. */
export function assertTeamAdmin(context: DecideContext, teamUid: string, what: string): void {
  if (own(context.teams, teamUid) !== 'admin') throw new Forbidden(`only team admins can change ${what}`);
}

export const budgetDecider: Decider<BudgetCommand, BudgetEvent, BudgetState> = {
  initialState: () => ({ status: 'none' }),
  evolve: (_state, event) => {
    if (event.type === 'BudgetRemoved') return { status: 'none' };
    const { scope, set_at, monthly_usd, per_run_usd, notify_at } = event.data;
    return { status: 'live', scope, set_at, monthly_usd, per_run_usd, notify_at };
  },
  decide: (command, state, context) => {
    assertTeamAdmin(context, command.data.scope.team_uid, 'budgets');
    if (command.type === 'SetBudget') return [{ type: 'BudgetSet', data: { ...command.data, set_at: context.now } }];
    if (state.status !== 'live') throw new NotFound('budget');
    return [{ type: 'BudgetRemoved', data: { scope: command.data.scope } }];
  },
};
