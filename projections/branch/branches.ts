/** Factory branches as their status shows them: files, validation, who proposed them, the version they last applied. */
import { projection } from '../../src/projector/projection.js';
import type { BranchContent, BranchEvent, DefinitionEvent } from '../../commands/branch/events.js';

type Principal = { type: 'user' | 'agent' | 'system'; uid: string };

export interface BranchDoc extends BranchContent {
  [field: string]: unknown;
  uid: string;
  factory_uid: string;
  team_uid: string;
  name: string;
  status: 'OPEN' | 'DELETED';
  proposed_by: Principal;
  proposed_at: string;
  updated_by: Principal;
  updated_at: string;
  deleted_at: string | null;
  /** The newest definition version this branch applied. */
  last_applied: { version: number; applied_at: string; applied_by: Principal } | null;
}

export const branchesProjection = projection<BranchEvent | DefinitionEvent, BranchDoc>({
  name: 'branches',
  version: 1,
  indexes: [['factory_uid', 'status', 'name']],
  on: {
    FactoryBranchCreated: (e, docs) =>
      docs.put(e.data.uid, {
        ...e.data,
        status: 'OPEN',
        proposed_by: e.metadata.actor,
        proposed_at: e.metadata.occurred_at,
        updated_by: e.metadata.actor,
        updated_at: e.metadata.occurred_at,
        deleted_at: null,
        last_applied: null,
      } satisfies BranchDoc),
    FactoryBranchFilesReplaced: (e, docs) => {
      const { uid: _uid, factory_uid: _factory, ...content } = e.data;
      docs.patch(e.data.uid, { ...content, updated_by: e.metadata.actor, updated_at: e.metadata.occurred_at });
    },
    FactoryBranchDeleted: (e, docs) =>
      docs.patch(e.data.uid, { status: 'DELETED', deleted_at: e.metadata.occurred_at }),
    FactoryDefinitionApplied: (e, docs) =>
      docs.patch(e.data.branch_uid, {
        last_applied: { version: e.data.version, applied_at: e.metadata.occurred_at, applied_by: e.metadata.actor },
      }),
  },
});
