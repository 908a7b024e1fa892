/**
 * The definition in force of each factory (its version, the resources it manages with their uids,
 * its runners and settings), and the history of its versions: which, from which branch, by whom,
 * when. A version is `applying` from its decision until it has been carried out onto its resources.
 */
import { projection } from '../../src/projector/projection.js';
import type { BranchFile, Changes, DefinitionEvent, FactoryDefinitionApplied } from '../../commands/branch/events.js';

type Applied = FactoryDefinitionApplied['data'];
type Principal = { type: 'user' | 'agent' | 'system'; uid: string };

interface VersionFields {
  factory_uid: string;
  version: number;
  state: 'applying' | 'applied';
  branch_uid: string;
  branch_name: string;
  content_hash: string;
  schema_version: string;
  applied_by: Principal;
  applied_at: string;
  completed_at: string | null;
  changes: Changes;
  files: BranchFile[];
}

export interface DefinitionDoc extends VersionFields {
  [field: string]: unknown;
  team_uid: string;
  factory_hash: string;
  resources: Applied['resources'];
  runners: Applied['runners'];
  factory: Applied['factory'];
}

export interface DefinitionVersionDoc extends VersionFields {
  [field: string]: unknown;
}

type Tables = { versions: DefinitionVersionDoc };

/** Versions sort as text in their table: zero-padded. */
const versionId = (factoryUid: string, version: number) => `${factoryUid}:${String(version).padStart(10, '0')}`;

export const factoryDefinitionsProjection = projection<DefinitionEvent, DefinitionDoc, Tables>({
  name: 'factory_definitions',
  version: 1,
  indexes: [['state']],
  tables: { versions: [['factory_uid', 'version']] },
  on: {
    FactoryDefinitionApplied: (e, docs) => {
      const d = e.data;
      const fields: DefinitionVersionDoc = {
        factory_uid: d.factory_uid,
        version: d.version,
        state: 'applying',
        branch_uid: d.branch_uid,
        branch_name: d.branch_name,
        content_hash: d.content_hash,
        schema_version: d.schema_version,
        applied_by: e.metadata.actor,
        applied_at: e.metadata.occurred_at,
        completed_at: null,
        changes: d.changes,
        files: d.files,
      };
      docs.put(d.factory_uid, {
        ...fields,
        team_uid: d.team_uid,
        factory_hash: d.factory_hash,
        resources: d.resources,
        runners: d.runners,
        factory: d.factory,
      } satisfies DefinitionDoc);
      docs.in('versions').put(versionId(d.factory_uid, d.version), { ...fields });
    },
    FactoryDefinitionCompleted: async (e, docs) => {
      const done = { state: 'applied' as const, completed_at: e.metadata.occurred_at };
      const current = await docs.get(e.data.factory_uid);
      if (current?.version === e.data.version) docs.patch(e.data.factory_uid, done);
      docs.in('versions').patch(versionId(e.data.factory_uid, e.data.version), done);
    },
  },
});
