/**
 * The budget decision of a run start, made once for every way a run starts (createRun, a
 * follow-up that resumes a run, an approval): each budget that pays for the run (its team's, its
 * factory's, its creator's in the team) reserves the run's estimate on its period stream, or
 * refuses. A refusal gives back what the budgets before it reserved and answers `budget_exceeded`.
 */
import { DomainError } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { budgetDecider } from './budget-decider.js';
import { contended } from './contended.js';
import { type BudgetScope, budgetPeriodStream, budgetStream, periodOf, scopeKey } from './events.js';
import { periodDecider } from './period-decider.js';

/** What decides which budgets pay for a run. */
export interface RunPayer {
  run_id: string;
  /** The owning team; null for a personal run, which no team budget pays for. */
  team_uid: string | null;
  factory_uid: string | null;
  creator: { type: 'user' | 'service_account'; uid: string };
}

/** A start refused by a budget: 402, naming the budget. */
class BudgetExceeded extends DomainError {
  constructor(scope: BudgetScope, period: string, detail: string) {
    super(402, 'budget_exceeded', 'Budget exceeded', detail);
    this.retryable = false;
    this.extensions = { budget: { ...scope, period } };
  }
}

/** The budgets that pay for a run: its team's, its factory's, and its creator's in the team. */
export function payingScopes(payer: RunPayer): BudgetScope[] {
  const team_uid = payer.team_uid;
  if (!team_uid) return [];
  const scopes: BudgetScope[] = [{ kind: 'team', team_uid }];
  if (payer.factory_uid) scopes.push({ kind: 'factory', team_uid, factory_uid: payer.factory_uid });
  if (payer.creator.type === 'user') scopes.push({ kind: 'member', team_uid, user_uid: payer.creator.uid });
  return scopes;
}

const describe = (s: BudgetScope) =>
  s.kind === 'team' ? `team ${s.team_uid}` : s.kind === 'factory' ? `factory ${s.factory_uid}` : `member ${s.user_uid}`;

/**
 * Reserves the run's estimate on every budget that pays for it, or throws BudgetExceeded having
 * given back the reservations already made. Budgets are asked in one order (team, factory,
 * member), so concurrent starts meet them alike.
 */
export async function reserveBudgets(rt: Runtime, payer: RunPayer, context: CommandContext): Promise<BudgetScope[]> {
  const period = periodOf(context.now);
  const reserved: BudgetScope[] = [];
  for (const scope of payingScopes(payer)) {
    const budget = await rt.state(budgetDecider, budgetStream(scope));
    if (budget.status !== 'live') continue;
    const place = { scope, period, run_id: payer.run_id };
    const stream = budgetPeriodStream(scope, period);
    const { events } = await contended(`${payer.run_id}:${scopeKey(scope)}`, () =>
      rt.handle(
        stream,
        periodDecider,
        {
          type: 'Reserve',
          data: { ...place, budget, floor_usd: rt.config.BUDGET_RUN_ESTIMATE_FLOOR_USD },
        },
        context,
      ),
    );
    const refused = events.find((e) => e.type === 'BudgetRefused');
    if (refused?.type === 'BudgetRefused') {
      await releaseBudgets(rt, payer.run_id, reserved, period, context);
      const { spent_usd, reserved_usd, monthly_usd, amount_usd } = refused.data;
      throw new BudgetExceeded(
        scope,
        period,
        `the ${describe(scope)} budget of ${period} has no room for this run: $${spent_usd} spent and $${reserved_usd} reserved of $${monthly_usd}, and the run reserves $${amount_usd}`,
      );
    }
    reserved.push(scope);
  }
  return reserved;
}

/** Gives back a run's reservations (its creation failed after them). */
export async function releaseBudgets(
  rt: Runtime,
  runId: string,
  scopes: readonly BudgetScope[],
  period: string,
  context: CommandContext,
): Promise<void> {
  for (const scope of scopes) {
    await contended(`${runId}:${scopeKey(scope)}`, () =>
      rt.handle(
        budgetPeriodStream(scope, period),
        periodDecider,
        { type: 'Release', data: { scope, period, run_id: runId } },
        context,
      ),
    );
  }
}
