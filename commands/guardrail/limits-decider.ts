/**
 * A team's or a factory's limits (`limits-<scope>`): team admins set them; what is unset takes its
 * default (`LIMIT_DEFAULTS`). The effective limits of a run: its factory's where set, else its
 * team's, else the default; `max_concurrent_runs` holds for the team and the factory each.
 */
import type { Decider } from '../../src/kernel/decider.js';
import { assertTeamAdmin } from './budget-decider.js';
import type { BudgetScope, Limits, LimitsEvent } from './events.js';

type LimitScope = Exclude<BudgetScope, { kind: 'member' }>;

export type LimitsCommand = { type: 'SetLimits'; data: { scope: LimitScope; limits: Limits } };
export type LimitsState = { limits: Limits };

/** What an unset limit means (docs/features/guardrails.md). */
const LIMIT_DEFAULTS = {
  max_concurrent_runs: null,
  requires_approval: false,
  approval_timeout_minutes: 24 * 60,
  stuck_after_minutes: 30,
  max_run_minutes: 24 * 60,
} as const;

export type EffectiveLimits = {
  requires_approval: boolean;
  approval_timeout_minutes: number;
  stuck_after_minutes: number;
  max_run_minutes: number;
};

/** The factory's limit where set, else the team's, else the default. */
export function effectiveLimits(team: Limits, factory: Limits | null): EffectiveLimits {
  const pick = <K extends keyof EffectiveLimits>(key: K): EffectiveLimits[K] =>
    (factory?.[key] ?? team[key] ?? LIMIT_DEFAULTS[key]) as EffectiveLimits[K];
  return {
    requires_approval: pick('requires_approval'),
    approval_timeout_minutes: pick('approval_timeout_minutes'),
    stuck_after_minutes: pick('stuck_after_minutes'),
    max_run_minutes: pick('max_run_minutes'),
  };
}

export const limitsDecider: Decider<LimitsCommand, LimitsEvent, LimitsState> = {
  initialState: () => ({ limits: {} }),
  evolve: (_state, event) => ({ limits: event.data.limits }),
  decide: (command, _state, context) => {
    assertTeamAdmin(context, command.data.scope.team_uid, 'limits');
    return [{ type: 'LimitsSet', data: command.data }];
  },
};
