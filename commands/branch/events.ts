/**
 * Factory branches and the definition they apply.
 *
 * A branch (`branch-<uid>`) is a proposed definition of a factory: its files (kept as blobs,
 * named by hash), validated when they are set. Its name is unique among the factory's live
 * branches by a reservation (`branchname-<factory_uid>-<hash of the name>`).
 *
 * The definition in force is the factory's definition stream (`definition-<factory_uid>`): one
 * `FactoryDefinitionApplied` per version, which decides everything the version changes (each
 * resource with its uid, what is retired) in one append. The agents, automations and webhooks it
 * changes live on their own streams, so the version is carried out onto them afterwards, with ids
 * the event fixed, and `FactoryDefinitionCompleted` closes it. A process killed in between leaves
 * the version decided and not yet carried out: whoever starts next carries it out before serving
 * (commands/branch/definition-carry-out.ts), so the old definition stays in force until the event is written
 * and the new one is in force, whole, from then on.
 */
import type { Diagnostic, FactorySpec, ResourceKind, RunnerSpec } from '../factoryfile/public.js';

/** A file of a branch: its content is the blob of that hash. */
export interface BranchFile {
  path: string;
  sha256: string;
  size_bytes: number;
}

/** What a branch's files say, as decided when they were set. */
export interface BranchContent {
  files: BranchFile[];
  /** Of the paths and contents: equal content, equal hash. */
  content_hash: string;
  schema_version: string;
  valid: boolean;
  /** The first diagnostics (at most MAX_STORED_DIAGNOSTICS), of `diagnostic_count`. */
  diagnostics: Diagnostic[];
  diagnostic_count: number;
  /** Each resource of a valid branch, `kind/name`, with the hash of its resolved settings. */
  resources: Record<string, string>;
  /** The factory's definition version when the files were set (0: none applied yet). */
  base_version: number;
}

export type BranchEvent =
  | {
      type: 'FactoryBranchCreated';
      data: BranchContent & { uid: string; factory_uid: string; team_uid: string; name: string };
    }
  | { type: 'FactoryBranchFilesReplaced'; data: BranchContent & { uid: string; factory_uid: string } }
  | { type: 'FactoryBranchDeleted'; data: { uid: string; factory_uid: string; name: string } };

export type BranchNameEvent =
  | { type: 'BranchNameReserved'; data: { factory_uid: string; name: string; branch_uid: string } }
  | { type: 'BranchNameReleased'; data: { factory_uid: string; name: string; branch_uid: string } };

/** A resource the definition manages: the uid its name stands for. */
export interface ManagedResource {
  kind: ResourceKind;
  name: string;
  uid: string;
  /** Of its resolved settings (factoryfile/definition.ts specHash). */
  hash: string;
}

type ChangeKind = 'added' | 'changed' | 'retired';
export type Changes = Record<ResourceKind, Record<ChangeKind, string[]>> & { factory: { changed: boolean } };

export interface FactoryDefinitionApplied {
  type: 'FactoryDefinitionApplied';
  data: {
    factory_uid: string;
    team_uid: string;
    version: number;
    branch_uid: string;
    branch_name: string;
    content_hash: string;
    schema_version: string;
    files: BranchFile[];
    /** Every resource of this version. */
    resources: ManagedResource[];
    /** Resources of the version before that this one retires. */
    retired: Array<Omit<ManagedResource, 'hash'>>;
    changes: Changes;
    /** Of the factory's own settings (factory.yaml). */
    factory_hash: string;
    /** The resolved definition (factoryfile/definition.ts), prompts included: a JSON blob. */
    definition_blob: string;
    factory: FactorySpec;
    /** Runners have no resource of their own: their definitions live here, with their uids. */
    runners: Array<Omit<RunnerSpec, 'path'> & { uid: string }>;
  };
}

export type DefinitionEvent =
  | FactoryDefinitionApplied
  | { type: 'FactoryDefinitionCompleted'; data: { factory_uid: string; version: number } };

export const branchStream = (uid: string) => `branch-${uid}`;
export const branchNameStream = (factoryUid: string, nameHash: string) => `branchname-${factoryUid}-${nameHash}`;
export const definitionStream = (factoryUid: string) => `definition-${factoryUid}`;
