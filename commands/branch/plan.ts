/**
 * Planning a definition version: which uid each resource of the files stands for (the one the
 * definition in force gave it; else a live resource of the factory with that name, taken over;
 * else a new one), what the version retires, and every check that needs the service's state
 * (plan-checks.ts). A version with a problem is not decided: its diagnostics are the answer, and
 * the definition in force stays.
 */
import { timeOrderedId } from '../../src/ids.js';
import type { Runtime } from '../../src/runtime.js';
import type { LiveFactory } from '../factory/public.js';
import {
  canonicalJson,
  type Definition,
  RESOURCE_KINDS,
  type ResourceKind,
  resourceHashes,
  type StateReference,
  type Diagnostic,
} from '../factoryfile/public.js';
import type { AppliedData, DefinitionState } from './branch-decider.js';
import type { BranchContent, ManagedResource } from './events.js';
import { liveResources } from './live-resources.js';
import { type Assigned, stateDiagnostics } from './plan-checks.js';
import { changesOf } from './resource.js';

export type Planned = Omit<AppliedData, 'version'>;

export async function planVersion(
  rt: Runtime,
  factory: LiveFactory,
  branch: { uid: string; name: string; content: BranchContent },
  definition: Definition,
  references: readonly StateReference[],
  current: DefinitionState,
): Promise<{ planned: Planned; diagnostics: [] } | { planned: null; diagnostics: Diagnostic[] }> {
  const now = await liveResources(rt, factory, current);
  const hashes = resourceHashes(definition);
  const { resources, retired, unmanaged } = assignUids(definition, hashes, current, now.live);
  const diagnostics = await stateDiagnostics(rt, factory, definition, references, now, { resources, retired });
  if (diagnostics.length) return { planned: null, diagnostics };

  const uidOf = (kind: ResourceKind, name: string) => resources.find((r) => r.kind === kind && r.name === name)!.uid;
  const blob = await rt.blobs.put(Buffer.from(canonicalJson(definition)));
  return {
    diagnostics: [],
    planned: {
      factory_uid: factory.uid,
      team_uid: factory.team_uid,
      branch_uid: branch.uid,
      branch_name: branch.name,
      content_hash: branch.content.content_hash,
      schema_version: branch.content.schema_version,
      files: branch.content.files,
      resources,
      retired,
      changes: changesOf(hashes, current.resources, current.factory_hash, unmanaged),
      factory_hash: hashes['factory/factory']!,
      definition_blob: blob,
      factory: definition.factory,
      runners: definition.runners.map(({ path: _path, ...runner }) => ({
        ...runner,
        uid: uidOf('runners', runner.name),
      })),
    },
  };
}

/**
 * The uid of each resource of the definition, what the version retires, and the names of live
 * resources it takes over (`unmanaged`).
 */
function assignUids(
  definition: Definition,
  hashes: Record<string, string>,
  current: DefinitionState,
  live: Record<ResourceKind, Map<string, string>>,
): Assigned & { unmanaged: Partial<Record<ResourceKind, Set<string>>> } {
  const resources: ManagedResource[] = [];
  const taken = new Set<string>();
  const unmanaged: Partial<Record<ResourceKind, Set<string>>> = {};
  for (const kind of RESOURCE_KINDS) {
    const managedUids = new Set(current.resources.filter((r) => r.kind === kind).map((r) => r.uid));
    for (const spec of definition[kind]) {
      const managed = current.resources.find((r) => r.kind === kind && r.name === spec.name);
      let uid = managed && live[kind].has(managed.uid) ? managed.uid : undefined;
      if (!uid) {
        // A live resource of that name that no definition manages is taken over, keeping its uid.
        // (A scorer's API name is the file's `name`, else its directory's.)
        const apiName = 'display_name' in spec ? spec.display_name : spec.name;
        const [adopted] = [...live[kind]].filter(([u, name]) => name === apiName && !managedUids.has(u)).sort();
        if (adopted && !taken.has(adopted[0])) {
          uid = adopted[0];
          (unmanaged[kind] ??= new Set()).add(spec.name);
        }
      }
      uid ??= timeOrderedId();
      taken.add(uid);
      resources.push({ kind, name: spec.name, uid, hash: hashes[`${kind}/${spec.name}`]! });
    }
  }
  const desired = new Set(resources.map((r) => `${r.kind}/${r.name}`));
  const retired = current.resources
    .filter((r) => !desired.has(`${r.kind}/${r.name}`) && live[r.kind].has(r.uid))
    .map(({ kind, name, uid }) => ({ kind, name, uid }));
  return { resources, retired, unmanaged };
}
