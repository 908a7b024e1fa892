/** The budget resource: its body, its answer, and how a budget's stream and its month render it. */
import { z } from 'zod';
import { type BudgetFields, DEFAULT_NOTIFY_AT } from './events.js';
import type { PeriodState } from './period-decider.js';
import { roundUsd } from './period-decider.js';

const usd = z.number().finite().positive().max(1_000_000_000);

export const budgetBody = z
  .object({
    monthly_usd: usd.describe('What the scope may spend in a calendar month (UTC), in US dollars'),
    per_run_usd: usd
      .nullable()
      .optional()
      .describe('The most one run may cost; a run passing it is cancelled. A run reserves it when it starts'),
    notify_at: z
      .array(z.number().finite().gt(0).max(10))
      .max(10)
      .refine((a) => new Set(a).size === a.length, 'thresholds must differ')
      .optional()
      .describe('Fractions of monthly_usd whose passing is notified once a month (default [0.5, 0.8, 1])'),
  })
  .strict();

export const budgetAnswer = z.object({
  monthly_usd: z.number(),
  per_run_usd: z.number().nullable(),
  notify_at: z.array(z.number()),
  period_start: z.string().describe('The start of the current calendar month (UTC)'),
  period_end: z.string().describe('The start of the next one'),
  spent_usd: z.number().describe("Priced usage charged this month (the cost ledger's)"),
  reserved_usd: z.number().describe('What runs in flight may still spend of their reservations'),
  remaining_usd: z.number().describe('monthly_usd less spent and reserved (never below 0)'),
});

export const fieldsOf = (body: z.infer<typeof budgetBody>): BudgetFields => ({
  monthly_usd: body.monthly_usd,
  per_run_usd: body.per_run_usd ?? null,
  notify_at: body.notify_at ?? [...DEFAULT_NOTIFY_AT],
});

/** The month `period` (`YYYY-MM`) as its first instant and the next month's. */
function periodBounds(period: string): { period_start: string; period_end: string } {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return {
    period_start: new Date(Date.UTC(year, month - 1, 1)).toISOString(),
    period_end: new Date(Date.UTC(year, month, 1)).toISOString(),
  };
}

export const toBudgetResource = (
  fields: BudgetFields,
  period: string,
  state: PeriodState,
): z.infer<typeof budgetAnswer> => ({
  monthly_usd: fields.monthly_usd,
  per_run_usd: fields.per_run_usd,
  notify_at: fields.notify_at,
  ...periodBounds(period),
  spent_usd: state.spent,
  reserved_usd: state.held,
  remaining_usd: roundUsd(Math.max(0, fields.monthly_usd - state.spent - state.held)),
});
