/**
 * The rules of branches, of their names, and of the definition in force. Pure: the content of a
 * branch (its validation) and a definition version (its plan) are decided by the caller from the
 * files and the live factory, and come in with the command.
 */
import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import { Conflict, Forbidden, NotFound } from '../../src/kernel/errors.js';
import type {
  BranchContent,
  BranchEvent,
  BranchNameEvent,
  DefinitionEvent,
  FactoryDefinitionApplied,
  ManagedResource,
} from './events.js';
import { ownsKey } from '../../src/own-keys.js';

type BranchIdentity = { uid: string; factory_uid: string; team_uid: string; name: string };

export type BranchCommand =
  | { type: 'CreateBranch'; data: BranchIdentity & BranchContent }
  | { type: 'ReplaceBranchFiles'; data: { uid: string } & BranchContent }
  | { type: 'DeleteBranch'; data: { uid: string } };

export type BranchState =
  | { status: 'none' }
  | (BranchIdentity & { status: 'live' | 'deleted'; content: BranchContent });

/** A branch of another team's factory does not exist for the caller. */
function visible(state: BranchState, uid: string, context: DecideContext) {
  if (state.status === 'none' || !ownsKey(context.teams, state.team_uid)) throw new NotFound('branch', uid);
  return state;
}

const assertUser = (context: DecideContext, what: string) => {
  if (context.actor.type !== 'user') throw new Forbidden(`only users ${what}`);
};

const retired = (uid: string) => new Conflict(`branch ${uid} is retired (deleted)`, 'branch_deleted');

export const branchDecider: Decider<BranchCommand, BranchEvent, BranchState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    switch (event.type) {
      case 'FactoryBranchCreated': {
        const { uid, factory_uid, team_uid, name, ...content } = event.data;
        return { status: 'live', uid, factory_uid, team_uid, name, content };
      }
      case 'FactoryBranchFilesReplaced': {
        if (state.status === 'none') return state;
        const { uid: _uid, factory_uid: _factory, ...content } = event.data;
        return { ...state, content };
      }
      case 'FactoryBranchDeleted':
        return state.status === 'none' ? state : { ...state, status: 'deleted' };
    }
  },

  decide: (command, state, context) => {
    switch (command.type) {
      case 'CreateBranch': {
        if (state.status !== 'none') throw new Conflict(`branch ${command.data.uid} exists`);
        // Users and agents of the team propose; an agent proposing a change is the usual case.
        if (!ownsKey(context.teams, command.data.team_uid)) throw new NotFound('factory', command.data.factory_uid);
        return [{ type: 'FactoryBranchCreated', data: command.data }];
      }
      case 'ReplaceBranchFiles': {
        const branch = visible(state, command.data.uid, context);
        if (branch.status === 'deleted') throw retired(branch.uid);
        const { uid: _uid, ...content } = command.data;
        if (JSON.stringify(content) === JSON.stringify(branch.content)) return [];
        return [
          {
            type: 'FactoryBranchFilesReplaced',
            data: { ...content, uid: branch.uid, factory_uid: branch.factory_uid },
          },
        ];
      }
      case 'DeleteBranch': {
        const branch = visible(state, command.data.uid, context);
        assertUser(context, 'retire branches');
        if (branch.status === 'deleted') return []; // a repeated delete changes nothing
        return [
          {
            type: 'FactoryBranchDeleted',
            data: { uid: branch.uid, factory_uid: branch.factory_uid, name: branch.name },
          },
        ];
      }
    }
  },
};

/** One live branch per name and factory: the name's holder, told by its reservation stream. */
export type BranchNameCommand =
  | {
      type: 'ReserveBranchName';
      data: { factory_uid: string; name: string; branch_uid: string };
      /** The holder's branch is retired (folded by the caller): its name may be taken over. */
      holderRetired: boolean;
    }
  | { type: 'ReleaseBranchName'; data: { factory_uid: string; name: string; branch_uid: string } };

export type BranchNameState = { holder: string | null };

export const branchNameDecider: Decider<BranchNameCommand, BranchNameEvent, BranchNameState> = {
  initialState: () => ({ holder: null }),
  evolve: (state, event) =>
    event.type === 'BranchNameReserved'
      ? { holder: event.data.branch_uid }
      : state.holder === event.data.branch_uid
        ? { holder: null }
        : state,
  decide: (command, state) => {
    const { data } = command;
    if (command.type === 'ReleaseBranchName')
      return state.holder === data.branch_uid ? [{ type: 'BranchNameReleased', data }] : [];
    if (state.holder === data.branch_uid) return [];
    if (state.holder !== null && !command.holderRetired)
      throw new Conflict(
        `the factory has a branch named ${data.name} (${state.holder}): update its files instead`,
        'branch_name_taken',
      );
    return [{ type: 'BranchNameReserved', data }];
  },
};

export type AppliedData = FactoryDefinitionApplied['data'];

export type DefinitionCommand =
  | { type: 'ApplyDefinition'; data: Omit<AppliedData, 'version'>; base_version: number }
  | { type: 'CompleteDefinition'; data: { factory_uid: string; version: number } };

export interface DefinitionState {
  /** 0 before the first version. */
  version: number;
  content_hash: string | null;
  factory_hash: string | null;
  resources: ManagedResource[];
  /** A version decided and not yet carried out onto its resources. */
  pending: AppliedData | null;
}

export const definitionDecider: Decider<DefinitionCommand, DefinitionEvent, DefinitionState> = {
  initialState: () => ({ version: 0, content_hash: null, factory_hash: null, resources: [], pending: null }),
  evolve: (state, event) =>
    event.type === 'FactoryDefinitionApplied'
      ? {
          version: event.data.version,
          content_hash: event.data.content_hash,
          factory_hash: event.data.factory_hash,
          resources: event.data.resources,
          pending: event.data,
        }
      : state.pending?.version === event.data.version
        ? { ...state, pending: null }
        : state,
  decide: (command, state, context) => {
    if (command.type === 'CompleteDefinition')
      return state.pending?.version === command.data.version
        ? [{ type: 'FactoryDefinitionCompleted', data: command.data }]
        : [];
    const { data } = command;
    if (!ownsKey(context.teams, data.team_uid)) throw new NotFound('factory', data.factory_uid);
    assertUser(context, 'apply a definition');
    if (state.pending) throw new Conflict(`version ${state.pending.version} is being applied; retry`, 'conflict', true);
    if (command.base_version !== state.version)
      throw new Conflict(
        `the definition changed (version ${state.version}) while this one was planned; retry`,
        'conflict',
        true,
      );
    if (data.content_hash === state.content_hash) return [];
    return [{ type: 'FactoryDefinitionApplied', data: { ...data, version: state.version + 1 } }];
  },
};
