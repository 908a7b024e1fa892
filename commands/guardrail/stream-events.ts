/**
 * What a budget tells the event streams and outbound webhooks, defined once: a threshold passed,
 * and the first refusal of a month, readable by the budget's team. (A run's approval is the run
 * feature's to tell: run/approval-stream-events.ts.)
 */
import { z } from 'zod';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { StreamEventSource, StreamItem } from '../../src/streams/stream-events.js';
import type { BudgetPeriodEvent, BudgetScope } from './events.js';

const budgetSchema = z.object({
  kind: z.enum(['team', 'factory', 'member']),
  team_uid: z.string(),
  factory_uid: z.string().optional(),
  user_uid: z.string().optional(),
  period: z.string().describe('The calendar month, YYYY-MM (UTC)'),
});

const team = (description: string, schema: z.ZodObject) => ({ feeds: ['team'] as const, description, schema });

const TYPES = {
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
  const e = event as unknown as BudgetPeriodEvent;
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
  from: ['BudgetThresholdReached', 'BudgetRefused'],
  types: TYPES,
  map: mapDecision,
};
