/**
 * The inbox notices guardrail decisions raise (its public events: stream-events.ts, and the run's approval events). Only
 * run events and guardrail events are read: the run feature, which calls this one at every start,
 * is not needed here.
 */
import type { Runtime } from '../../src/runtime.js';
import { type RunCreatedData, type RunEvent, runStream } from '../run/events.js';
import { type BudgetPeriodEvent, type BudgetScope, budgetPeriodStream, scopeKey } from './events.js';
import { periodDecider } from './period-decider.js';

export type GuardrailSource = BudgetPeriodEvent | RunEvent;

/** A run as its creation recorded it (its first event). */
async function createdOf(rt: Runtime, runId: string): Promise<RunCreatedData | null> {
  const [first] = await rt.events.readStream(runStream(runId), { maxCount: 1 });
  return first?.type === 'RunCreated' ? (first.data as RunCreatedData) : null;
}

/** An inbox notice a guardrail keeps active, by key within its subject. */
export interface GuardrailNotice {
  subject: string;
  team_uid: string;
  factory_uid: string | null;
  notices: Array<{
    kind: 'budget' | 'approval';
    key: string;
    title: string;
    description: string;
    run_id: string | null;
  }>;
}

/** What a budget's month tells its team's admins: each threshold passed, and that it refused a start. */
export async function budgetNotices(rt: Runtime, scope: BudgetScope, period: string): Promise<GuardrailNotice> {
  const state = await rt.state(periodDecider, budgetPeriodStream(scope, period));
  const name = `${scope.kind} budget${scope.kind === 'factory' ? ` of factory ${scope.factory_uid}` : ''}`;
  const notices = state.notified.map((fraction) => ({
    kind: 'budget' as const,
    key: `threshold:${fraction}`,
    title: `The ${name} passed ${Math.round(fraction * 100)}% of its month (${period})`,
    description: `$${state.spent} spent`,
    run_id: null,
  }));
  if (state.refusals > 0)
    notices.push({
      kind: 'budget',
      key: 'exceeded',
      title: `The ${name} refused runs (${period})`,
      description: 'Runs were refused budget_exceeded: spent and reserved left no room',
      run_id: null,
    });
  const factory_uid = scope.kind === 'factory' ? scope.factory_uid : null;
  return { subject: `budget-${scopeKey(scope)}-${period}`, team_uid: scope.team_uid, factory_uid, notices };
}

/** Where a notice about a run goes: its team (the executing one for a personal run) and factory. */
export async function runNoticePlace(
  rt: Runtime,
  runId: string,
): Promise<{ team_uid: string; factory_uid: string | null } | null> {
  const run = await createdOf(rt, runId);
  return run && { team_uid: run.team_uid ?? run.executing_team_uid, factory_uid: run.factory_uid };
}

/** What a run waiting for approval tells its team's admins (nothing once decided). */
export async function approvalNotice(rt: Runtime, runId: string, pending: boolean): Promise<GuardrailNotice | null> {
  const run = await createdOf(rt, runId);
  if (!run) return null;
  const notices = pending
    ? [
        {
          kind: 'approval' as const,
          key: 'approval',
          title: `Approval needed: ${run.title}`.slice(0, 300),
          description: 'Approve or deny it: POST /agent/runs/{run_id}/approve or /deny',
          run_id: runId,
        },
      ]
    : [];
  const place = { team_uid: run.team_uid ?? run.executing_team_uid, factory_uid: run.factory_uid };
  return { subject: `approval-${runId}`, ...place, notices };
}
