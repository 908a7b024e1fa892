/** The rules of branches, of their names, and of the definition versions of a factory. */
import { describe, expect, it } from 'vitest';
import {
  type AppliedData,
  branchDecider,
  branchNameDecider,
  definitionDecider,
} from '../../../commands/branch/branch-decider.js';
import type { BranchContent, BranchEvent, Changes, DefinitionEvent } from '../../../commands/branch/events.js';
import { Conflict, Forbidden, NotFound } from '../../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../../helpers/decider-spec.js';
import { metadata, project, recorded } from '../../helpers/projection-spec.js';
import { factoryDefinitionsProjection } from '../../../projections/branch/factory-definitions.js';
import { branchesProjection } from '../../../projections/branch/branches.js';

const content = (hash = 'h-1'): BranchContent => ({
  files: [{ path: 'factory.yaml', sha256: 'f'.repeat(64), size_bytes: 10 }],
  content_hash: hash,
  schema_version: 'v1alpha1',
  valid: true,
  diagnostics: [],
  diagnostic_count: 0,
  resources: { 'factory/factory': 'x' },
  base_version: 0,
});
const created: BranchEvent = {
  type: 'FactoryBranchCreated',
  data: { uid: 'b-1', factory_uid: 'f-1', team_uid: 't-1', name: 'main', ...content() },
};
const agentContext = {
  ...userContext(),
  actor: { type: 'agent' as const, uid: 'a-1' },
  teams: { 't-1': 'member' as const },
};
const stranger = userContext('u-2', { 't-2': 'admin' });

describe('branches', () => {
  const spec = deciderSpec(branchDecider);

  it("are proposed by the people and agents of the factory's team", () => {
    spec
      .given([])
      .when({ type: 'CreateBranch', data: created.data })
      .then([{ type: 'FactoryBranchCreated' }]);
    spec
      .given([])
      .when({ type: 'CreateBranch', data: created.data }, agentContext)
      .then([{ type: 'FactoryBranchCreated' }]);
    spec.given([]).when({ type: 'CreateBranch', data: created.data }, stranger).thenThrows(NotFound);
    spec.given([created]).when({ type: 'CreateBranch', data: created.data }).thenThrows(Conflict);
  });

  it('take new files; the same files are no change', () => {
    spec
      .given([created])
      .when({ type: 'ReplaceBranchFiles', data: { uid: 'b-1', ...content('h-2') } }, agentContext)
      .then([{ type: 'FactoryBranchFilesReplaced', data: { uid: 'b-1', factory_uid: 'f-1', content_hash: 'h-2' } }]);
    spec
      .given([created])
      .when({ type: 'ReplaceBranchFiles', data: { uid: 'b-1', ...content() } })
      .thenNothingHappened();
    spec
      .given([created])
      .when({ type: 'ReplaceBranchFiles', data: { uid: 'b-1', ...content('h-2') } }, stranger)
      .thenThrows(NotFound);
  });

  it('are retired by users, once; a retired branch takes no files', () => {
    const deleted: BranchEvent = {
      type: 'FactoryBranchDeleted',
      data: { uid: 'b-1', factory_uid: 'f-1', name: 'main' },
    };
    spec
      .given([created])
      .when({ type: 'DeleteBranch', data: { uid: 'b-1' } })
      .then([deleted]);
    spec
      .given([created])
      .when({ type: 'DeleteBranch', data: { uid: 'b-1' } }, agentContext)
      .thenThrows(Forbidden);
    spec
      .given([created, deleted])
      .when({ type: 'DeleteBranch', data: { uid: 'b-1' } })
      .thenNothingHappened();
    spec
      .given([created, deleted])
      .when({ type: 'ReplaceBranchFiles', data: { uid: 'b-1', ...content('h-2') } })
      .thenThrows(Conflict, /retired/);
    spec
      .given([])
      .when({ type: 'DeleteBranch', data: { uid: 'b-1' } })
      .thenThrows(NotFound);
  });
});

describe('branch names', () => {
  const spec = deciderSpec(branchNameDecider);
  const data = (branch_uid: string) => ({ factory_uid: 'f-1', name: 'main', branch_uid });
  const reserved = { type: 'BranchNameReserved' as const, data: data('b-1') };

  it('name one live branch of a factory: another is refused until the first is retired', () => {
    spec
      .given([])
      .when({ type: 'ReserveBranchName', data: data('b-1'), holderRetired: false })
      .then([reserved]);
    spec
      .given([reserved])
      .when({ type: 'ReserveBranchName', data: data('b-1'), holderRetired: false })
      .thenNothingHappened();
    spec
      .given([reserved])
      .when({ type: 'ReserveBranchName', data: data('b-2'), holderRetired: false })
      .thenThrows(Conflict, /b-1/);
    // A holder retired (or never created, after a crash) gives the name up.
    spec
      .given([reserved])
      .when({ type: 'ReserveBranchName', data: data('b-2'), holderRetired: true })
      .then([{ type: 'BranchNameReserved', data: data('b-2') }]);
  });

  it('are released by their holder only', () => {
    spec
      .given([reserved])
      .when({ type: 'ReleaseBranchName', data: data('b-1') })
      .then([{ type: 'BranchNameReleased' }]);
    spec
      .given([reserved])
      .when({ type: 'ReleaseBranchName', data: data('b-2') })
      .thenNothingHappened();
    const released = { type: 'BranchNameReleased' as const, data: data('b-1') };
    spec
      .given([reserved, released])
      .when({ type: 'ReserveBranchName', data: data('b-2'), holderRetired: false })
      .then([{ type: 'BranchNameReserved' }]);
  });
});

const noChanges = { added: [], changed: [], retired: [] };
const changes: Changes = {
  agents: noChanges,
  automations: noChanges,
  webhooks: noChanges,
  scorers: noChanges,
  runners: noChanges,
  factory: { changed: true },
};
const planned = (content_hash: string): Omit<AppliedData, 'version'> => ({
  factory_uid: 'f-1',
  team_uid: 't-1',
  branch_uid: 'b-1',
  branch_name: 'main',
  content_hash,
  schema_version: 'v1alpha1',
  files: [],
  resources: [{ kind: 'agents', name: 'foreman', uid: 'a-1', hash: 'x' }],
  retired: [],
  changes,
  factory_hash: 'fh',
  definition_blob: 'd'.repeat(64),
  factory: {} as AppliedData['factory'],
  runners: [],
});
const applied = (version: number, hash: string): DefinitionEvent => ({
  type: 'FactoryDefinitionApplied',
  data: { ...planned(hash), version },
});
const completed = (version: number): DefinitionEvent => ({
  type: 'FactoryDefinitionCompleted',
  data: { factory_uid: 'f-1', version },
});

describe('definition versions', () => {
  const spec = deciderSpec(definitionDecider);
  const apply = (hash: string, base_version: number) => ({
    type: 'ApplyDefinition' as const,
    data: planned(hash),
    base_version,
  });

  it('are decided in one event, numbered from 1, by users of the team', () => {
    spec
      .given([])
      .when(apply('h-1', 0))
      .then([{ type: 'FactoryDefinitionApplied', data: { version: 1, content_hash: 'h-1' } }]);
    spec
      .given([applied(1, 'h-1'), completed(1)])
      .when(apply('h-2', 1))
      .then([{ type: 'FactoryDefinitionApplied', data: { version: 2 } }]);
    spec.given([]).when(apply('h-1', 0), agentContext).thenThrows(Forbidden);
    spec.given([]).when(apply('h-1', 0), stranger).thenThrows(NotFound);
  });

  it('change nothing for the content already in force', () => {
    spec
      .given([applied(1, 'h-1'), completed(1)])
      .when(apply('h-1', 1))
      .thenNothingHappened();
  });

  it('wait for the version before them to be carried out, and were planned against the version in force', () => {
    spec
      .given([applied(1, 'h-1')])
      .when(apply('h-2', 1))
      .thenThrows(Conflict, /being applied/);
    spec
      .given([applied(1, 'h-1'), completed(1)])
      .when(apply('h-2', 0))
      .thenThrows(Conflict, /changed/);
  });

  it('are completed once', () => {
    spec
      .given([applied(1, 'h-1')])
      .when({ type: 'CompleteDefinition', data: { factory_uid: 'f-1', version: 1 } })
      .then([completed(1)]);
    spec
      .given([applied(1, 'h-1'), completed(1)])
      .when({ type: 'CompleteDefinition', data: { factory_uid: 'f-1', version: 1 } })
      .thenNothingHappened();
  });
});

describe('the read models of definitions and branches', () => {
  const history = recorded([
    { ...created, metadata: metadata('2026-01-01T00:00:00.000Z') },
    { ...applied(1, 'h-1'), metadata: metadata('2026-01-01T00:01:00.000Z') },
    { ...completed(1), metadata: metadata('2026-01-01T00:01:01.000Z') },
    { ...applied(2, 'h-2'), metadata: metadata('2026-01-01T00:02:00.000Z') },
  ]);

  it('keep the version in force (applying until completed) and every version in its history', async () => {
    const docs = await project(factoryDefinitionsProjection, history);
    expect(docs['f-1']).toMatchObject({ version: 2, state: 'applying', content_hash: 'h-2', completed_at: null });
    expect(docs['versions/f-1:0000000001']).toMatchObject({
      version: 1,
      state: 'applied',
      completed_at: '2026-01-01T00:01:01.000Z',
    });
    expect(docs['versions/f-1:0000000002']).toMatchObject({ version: 2, state: 'applying' });
    expect(await project(factoryDefinitionsProjection, history, { times: 2 })).toEqual(docs);
    expect(await project(factoryDefinitionsProjection, history, { batchSize: 1 })).toEqual(docs);
  });

  it('keep each branch with the version it last applied', async () => {
    const docs = await project(branchesProjection, history);
    expect(docs['b-1']).toMatchObject({
      status: 'OPEN',
      name: 'main',
      last_applied: { version: 2, applied_at: '2026-01-01T00:02:00.000Z' },
    });
    expect(await project(branchesProjection, history, { times: 2 })).toEqual(docs);
  });
});
