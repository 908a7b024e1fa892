/**
 * Which runs wait for a team admin's approval before they begin: root runs of a factory or team
 * whose limits say `requires_approval`, and runs of an automation or a schedule that requires it.
 * A waiting run reserves no budget and takes no place under a limit: both happen when it is
 * approved, so an approval a budget has no room for is refused `budget_exceeded` and the run waits on.
 */
import type { Runtime } from '../../src/runtime.js';
import type { ApprovalRule } from '../run/events.js';
import { limitsStream } from './events.js';
import { type EffectiveLimits, effectiveLimits, limitsDecider } from './limits-decider.js';

/** The run's limits: its factory's where set, else its team's, else the defaults. */
export async function limitsOfRun(
  rt: Runtime,
  run: { team_uid: string | null; executing_team_uid: string; factory_uid: string | null },
): Promise<EffectiveLimits> {
  const team_uid = run.team_uid ?? run.executing_team_uid;
  const team = await rt.state(limitsDecider, limitsStream({ kind: 'team', team_uid }));
  const factory = run.factory_uid
    ? await rt.state(limitsDecider, limitsStream({ kind: 'factory', team_uid, factory_uid: run.factory_uid }))
    : null;
  return effectiveLimits(team.limits, factory?.limits ?? null);
}

/** The approval a new run waits for, or null when it may begin at once. */
export async function approvalFor(
  rt: Runtime,
  run: { team_uid: string | null; executing_team_uid: string; factory_uid: string | null; depth: number },
  now: string,
  requiredBy: 'automation' | 'schedule' | null,
): Promise<{ rule: ApprovalRule; expires_at: string } | null> {
  // Sub-runs of a run that began, and personal runs (no team's admins to ask), never wait.
  if (run.depth > 0 || run.team_uid === null) return null;
  const limits = await limitsOfRun(rt, run);
  const rule: ApprovalRule | null =
    requiredBy ?? (limits.requires_approval ? (run.factory_uid ? 'factory' : 'team') : null);
  if (!rule) return null;
  const expires_at = new Date(Date.parse(now) + limits.approval_timeout_minutes * 60_000).toISOString();
  return { rule, expires_at };
}
