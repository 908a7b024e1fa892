import type { Principal } from '../../src/http/principal.js';

export type Repository = {
  owner: string;
  repo: string;
};

export type FactoryFields = {
  name: string;
  alias: string | null;
  description: string | null;
  repositories: Repository[];
};

/**
 * A factory as its stream folds it (the factory decider's state), which is also what the deciders
 * of other streams are given of a factory (an agent's, to check its factory's team).
 */
export type FactoryState =
  | { status: 'none' }
  | { status: 'deleted'; uid: string; team_uid: string }
  | ({ status: 'live'; uid: string; team_uid: string } & FactoryFields);

export type FactoryEvent =
  | { type: 'FactoryCreated'; data: FactoryFields & { uid: string; team_uid: string } }
  | { type: 'FactoryUpdated'; data: { uid: string; changes: Partial<FactoryFields> } }
  | { type: 'FactoryDeleted'; data: { uid: string } };

export const factoryStream = (uid: string) => `factory-${uid}`;

/**
 * Who may read a factory and what is its (tasks, webhook deliveries, schedules): the members of its
 * team; within one team (a team's activity stream), that team's members only when it is the team.
 */
export const canReadFactory = (teamUid: string, principal: Principal, within: string | null = null): boolean =>
  principal.teams.has(teamUid) && (within === null || within === teamUid);
