/**
 * Who may read a run: the one rule of the run routes, the run list and the event streams. A run
 * is readable by the members of its team, a personal run by its creator only, and a run an agent's
 * team executes by that agent. Within one team (the list, a team's activity stream) the same rule
 * holds with that team alone.
 */
import type { Principal } from '../../src/http/principal.js';
import type { Filter } from '../../src/readstore/port.js';
import { personalOwnerKey } from '../../projections/run/runs.js';
import { canView } from './resource.js';

export interface RunOwner {
  team_uid: string | null;
  creator_uid: string;
  executing_team_uid: string;
}

export const ownerOfRun = (run: {
  team_uid: string | null;
  creator: { uid: string };
  executing_team_uid: string;
}): RunOwner => ({ team_uid: run.team_uid, creator_uid: run.creator.uid, executing_team_uid: run.executing_team_uid });

/** Whether `principal` may read the run: in any of its teams, or with `within`, in that team only. */
export function canReadRun(owner: RunOwner, principal: Principal, within: string | null = null): boolean {
  const teams =
    within === null ? Object.fromEntries(principal.teams) : principal.teams.has(within) ? { [within]: 1 } : {};
  return canView(owner, { actor: { type: principal.type, uid: principal.uid }, teams });
}

/**
 * `canReadRun(…, team)` as read-model filters, one per way of reading a run, each led by a field
 * indexed together with every sort (`owner_key`, `executing_team_uid`): the run list's scope.
 */
export function readableRunsIn(principal: Principal, team: string): Filter[] {
  return [
    { owner_key: team },
    { owner_key: personalOwnerKey(principal.uid) },
    ...(principal.type === 'agent' ? [{ executing_team_uid: team }] : []),
  ];
}

/** `canReadRun` in any of `teams` as one read-model filter. */
export function readableRunsFilter(principal: Principal, teams: string[]): Filter {
  return {
    $or: [
      { owner_key: { $in: teams } },
      { owner_key: personalOwnerKey(principal.uid) },
      ...(principal.type === 'agent' ? [{ executing_team_uid: { $in: teams } }] : []),
    ],
  };
}
