/**
 * What budgets and limits tell the event streams (and, for a threshold and the first refusal of a
 * month, outbound webhooks), defined once: a budget or limits set or removed, a threshold passed, a
 * refusal; readable by the members of the scope's team. (A run's approval is the run feature's to
 * tell: run/approval-stream-events.ts.)
 */
import { z } from 'zod';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { StreamEventSource, StreamItem } from '../../src/streams/stream-events.js';
import type { BudgetEvent, BudgetPeriodEvent, BudgetScope, LimitsEvent } from './events.js';

const budgetSchema = z.object({
  kind: z.enum(['team', 'factory', 'member']),
  team_uid: z.string(),
  factory_uid: z.string().optional(),
  user_uid: z.string().optional(),
  period: z.string().describe('The calendar month, YYYY-MM (UTC)'),
});

const team = (description: string, schema: z.ZodObject) => ({ feeds: ['team'] as const, description, schema });

const scopeSchema = z.object({
  kind: z.enum(['team', 'factory', 'member']),
  team_uid: z.string(),
  factory_uid: z.string().optional(),
  user_uid: z.string().optional(),
});
const amounts = z.object({
  monthly_usd: z.number(),
  per_run_usd: z.number().nullable(),
  notify_at: z.array(z.number()),
});
const limitsSchema = z.object({
  max_concurrent_runs: z.number().int().nullable().optional(),
  requires_approval: z.boolean().nullable().optional(),
  approval_timeout_minutes: z.number().nullable().optional(),
  stuck_after_minutes: z.number().nullable().optional(),
  max_run_minutes: z.number().nullable().optional(),
});

const TYPES = {
  'budget.changed': team(
    'A budget was set (its amounts) or removed (null), as GET …/budget answers its settings',
    z.object({ scope: scopeSchema, budget: amounts.nullable() }),
  ),
  'limits.changed': team(
    "A team's or a factory's limits were set (unset ones take the documented defaults)",
    z.object({ scope: scopeSchema, limits: limitsSchema }),
  ),
  'budget.threshold_reached': team(
    'A budget passed one of its notify_at fractions this month',
    z.object({ budget: budgetSchema, fraction: z.number(), spent_usd: z.number(), monthly_usd: z.number() }),
  ),
  'budget.exceeded': team(
    'A budget refused a run start for the first time this month (budget_exceeded)',
    z.object({
      budget: budgetSchema,
      refused_run_id: z.string(),
      spent_usd: z.number(),
      reserved_usd: z.number(),
      monthly_usd: z.number(),
    }),
  ),
} as const;

/** An item of a budget's or limits' scope: its team's members read it. */
function budgetItem(type: keyof typeof TYPES, scope: BudgetScope, data: Record<string, unknown>): StreamItem {
  return {
    type,
    data,
    team_uid: scope.team_uid,
    factory_uid: scope.kind === 'factory' ? scope.factory_uid : null,
    run: null,
    readable: ({ principal, team }) =>
      principal.teams.has(scope.team_uid) && (team ?? scope.team_uid) === scope.team_uid,
  };
}

async function mapDecision(_rt: Runtime, event: RecordedEvent): Promise<StreamItem | null> {
  const e = event as unknown as BudgetPeriodEvent | BudgetEvent | LimitsEvent;
  if (e.type === 'BudgetSet') {
    const { scope, monthly_usd, per_run_usd, notify_at } = e.data;
    return budgetItem('budget.changed', scope, { scope, budget: { monthly_usd, per_run_usd, notify_at } });
  }
  if (e.type === 'BudgetRemoved')
    return budgetItem('budget.changed', e.data.scope, { scope: e.data.scope, budget: null });
  if (e.type === 'LimitsSet') return budgetItem('limits.changed', e.data.scope, { ...e.data });
  if (e.type === 'BudgetThresholdReached') {
    const { scope, period, fraction, spent_usd, monthly_usd } = e.data;
    return budgetItem('budget.threshold_reached', scope, {
      budget: { ...scope, period },
      fraction,
      spent_usd,
      monthly_usd,
    });
  }
  if (e.type === 'BudgetRefused') {
    // Once a month per budget: the first refusal tells, the others are in the log.
    if (e.data.refusal !== 1) return null;
    const { scope, period, run_id, spent_usd, reserved_usd, monthly_usd } = e.data;
    const data = { budget: { ...scope, period }, refused_run_id: run_id, spent_usd, reserved_usd, monthly_usd };
    return budgetItem('budget.exceeded', scope, data);
  }
  return null;
}

export const guardrailStreamEvents: StreamEventSource = {
  from: ['BudgetSet', 'BudgetRemoved', 'LimitsSet', 'BudgetThresholdReached', 'BudgetRefused'],
  types: TYPES,
  map: mapDecision,
};
