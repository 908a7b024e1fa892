/**
 * A branch's status as the API answers it (what applying it would change against the factory's
 * live definition, its diagnostics, who proposed it and when), the definition in force and its
 * history, and the one comparison both the status and the apply make (`changesOf`).
 */
import { z } from 'zod';
import { uidParam } from '../../src/http/schemas.js';
import { DomainError } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { automationsProjection } from '../automation/public.js';
import { type BranchDoc, branchesProjection } from '../../projections/branch/branches.js';
import {
  type DefinitionDoc,
  type DefinitionVersionDoc,
  factoryDefinitionsProjection,
} from '../../projections/branch/factory-definitions.js';
import { identitiesProjection } from '../identity/public.js';
import { webhooksProjection } from '../webhook/public.js';
import { RESOURCE_KINDS, type ResourceKind, diagnosticSchema } from '../factoryfile/public.js';
import type { Changes, ManagedResource } from './events.js';
import { ownsKey } from '../../src/own-keys.js';

export const branchParams = z.object({ factory_uid: uidParam, branch_uid: uidParam });

const principal = z.object({ type: z.enum(['user', 'agent', 'system']), uid: z.string() });
const fileSchema = z.object({ path: z.string(), sha256: z.string(), size_bytes: z.number().int() });
const changeList = z.object({ added: z.array(z.string()), changed: z.array(z.string()), retired: z.array(z.string()) });
const changesSchema = z
  .object({
    agents: changeList,
    automations: changeList,
    webhooks: changeList,
    scorers: changeList,
    runners: changeList,
    factory: z.object({ changed: z.boolean().describe("Whether factory.yaml's own settings change") }),
  })
  .describe(
    'Resource names by what happens to them; a live resource of the same name that the definition does not manage yet is changed (it is taken over)',
  );

export const branchStatus = z.object({
  uid: z.string(),
  factory_uid: z.string(),
  name: z.string(),
  status: z
    .enum(['OPEN', 'APPLIED', 'DELETED'])
    .describe('APPLIED: its content is the definition in force; DELETED: retired'),
  freshness: z
    .enum(['CURRENT', 'STALE', 'UNKNOWN'])
    .describe('STALE: another version was applied after its files were set, so applying it may undo that one'),
  valid: z.boolean(),
  schema_version: z.string(),
  content_hash: z.string(),
  files: z.array(fileSchema),
  diagnostics: z.array(diagnosticSchema),
  diagnostic_count: z.number().int(),
  changes: changesSchema.nullable().describe('What applying it would change now; null when it is invalid or retired'),
  base_version: z.number().int().describe('The version in force when its files were set (0: none)'),
  live_version: z.number().int().describe('The version in force now (0: none)'),
  last_applied: z.object({ version: z.number().int(), applied_at: z.string(), applied_by: principal }).nullable(),
  proposed_by: principal,
  proposed_at: z.string(),
  updated_by: principal,
  updated_at: z.string(),
  deleted_at: z.string().nullable(),
});
export type BranchStatus = z.infer<typeof branchStatus>;

const noChanges = (): Changes => ({
  ...(Object.fromEntries(RESOURCE_KINDS.map((k) => [k, { added: [], changed: [], retired: [] }])) as unknown as Omit<
    Changes,
    'factory'
  >),
  factory: { changed: false },
});

/**
 * What a definition (`desired`: `kind/name` → hash, `factory/factory` included) changes against
 * the one in force (`managed`, `factoryHash`): a resource it does not manage yet but that lives
 * under the same name (`unmanaged`) is taken over, so it is changed, not added.
 */
export function changesOf(
  desired: Readonly<Record<string, string>>,
  managed: readonly ManagedResource[],
  factoryHash: string | null,
  unmanaged: Readonly<Partial<Record<ResourceKind, ReadonlySet<string>>>>,
): Changes {
  const changes = noChanges();
  const current = new Map(managed.map((r) => [`${r.kind}/${r.name}`, r]));
  for (const [key, hash] of Object.entries(desired)) {
    const [kind, name] = key.split('/') as [ResourceKind | 'factory', string];
    if (kind === 'factory') continue;
    const now = current.get(key);
    if (now) {
      if (now.hash !== hash) changes[kind].changed.push(name);
    } else if (unmanaged[kind]?.has(name)) changes[kind].changed.push(name);
    else changes[kind].added.push(name);
  }
  for (const r of managed) if (!ownsKey(desired, `${r.kind}/${r.name}`)) changes[r.kind].retired.push(r.name);
  changes.factory.changed = desired['factory/factory'] !== factoryHash;
  for (const kind of RESOURCE_KINDS) for (const list of Object.values(changes[kind])) list.sort();
  return changes;
}

/** Names of the factory's live agents, automations and webhooks that `managed` does not hold (read models). */
async function unmanagedNames(rt: Runtime, factoryUid: string, managed: readonly ManagedResource[]) {
  const uids = new Set(managed.map((r) => r.uid));
  const names = <T extends { name?: unknown }>(items: T[], uid: (t: T) => string) =>
    new Set(items.filter((i) => !uids.has(uid(i))).map((i) => String(i.name)));
  const [agents, automations, webhooks] = await Promise.all([
    rt
      .readModel(identitiesProjection)
      .find({ filter: { factory_uid: factoryUid }, sort: [['id', 'asc']], limit: 1000 }),
    rt
      .readModel(automationsProjection)
      .find({ filter: { factory_uid: factoryUid }, sort: [['id', 'asc']], limit: 1000 }),
    rt
      .readModel(webhooksProjection)
      .find({ filter: { factory_uid: factoryUid, deleted: false }, sort: [['id', 'asc']], limit: 1000 }),
  ]);
  return {
    agents: names(agents.items, (a) => a.uid),
    automations: names(automations.items, (a) => a.id),
    webhooks: names(webhooks.items, (w) => w.uid),
  };
}

/** The status of a branch now, against the definition in force (read models only: reading changes nothing). */
export async function branchStatusOf(rt: Runtime, branch: BranchDoc): Promise<BranchStatus> {
  const live = await rt.readModel(factoryDefinitionsProjection).get(branch.factory_uid);
  const liveVersion = live?.version ?? 0;
  const applied = branch.status !== 'DELETED' && live?.content_hash === branch.content_hash;
  const changes =
    branch.status === 'DELETED' || !branch.valid
      ? null
      : changesOf(
          branch.resources,
          live?.resources ?? [],
          live?.factory_hash ?? null,
          await unmanagedNames(rt, branch.factory_uid, live?.resources ?? []),
        );
  return {
    uid: branch.uid,
    factory_uid: branch.factory_uid,
    name: branch.name,
    status: branch.status === 'DELETED' ? 'DELETED' : applied ? 'APPLIED' : 'OPEN',
    freshness:
      branch.status === 'DELETED' ? 'UNKNOWN' : applied || branch.base_version === liveVersion ? 'CURRENT' : 'STALE',
    valid: branch.valid,
    schema_version: branch.schema_version,
    content_hash: branch.content_hash,
    files: branch.files,
    diagnostics: branch.diagnostics,
    diagnostic_count: branch.diagnostic_count,
    changes,
    base_version: branch.base_version,
    live_version: liveVersion,
    last_applied: branch.last_applied,
    proposed_by: branch.proposed_by,
    proposed_at: branch.proposed_at,
    updated_by: branch.updated_by,
    updated_at: branch.updated_at,
    deleted_at: branch.deleted_at,
  };
}

/** A branch of this factory the caller's teams can see, from the read model; 404 otherwise. */
export async function visibleBranch(
  rt: Runtime,
  teams: { has(team: string): boolean },
  factoryUid: string,
  branchUid: string,
): Promise<BranchDoc | null> {
  const branch = await rt.readModel(branchesProjection).get(branchUid);
  return branch && branch.factory_uid === factoryUid && teams.has(branch.team_uid) ? branch : null;
}

const versionFields = {
  factory_uid: z.string(),
  version: z.number().int(),
  state: z.enum(['applying', 'applied']).describe('applying: decided, being carried out onto its resources'),
  branch_uid: z.string(),
  branch_name: z.string(),
  content_hash: z.string(),
  schema_version: z.string(),
  applied_by: principal,
  applied_at: z.string(),
  completed_at: z.string().nullable(),
  changes: changesSchema,
};

export const definitionVersion = z.object({ ...versionFields, file_count: z.number().int() });

export const toDefinitionVersion = (v: DefinitionVersionDoc): z.infer<typeof definitionVersion> => ({
  factory_uid: v.factory_uid,
  version: v.version,
  state: v.state,
  branch_uid: v.branch_uid,
  branch_name: v.branch_name,
  content_hash: v.content_hash,
  schema_version: v.schema_version,
  applied_by: v.applied_by,
  applied_at: v.applied_at,
  completed_at: v.completed_at,
  changes: v.changes,
  file_count: v.files.length,
});

const json = z.record(z.string(), z.unknown());

export const definitionResource = z.object({
  ...versionFields,
  files: z.array(fileSchema),
  resources: z
    .array(z.object({ kind: z.enum(RESOURCE_KINDS), name: z.string(), uid: z.string() }))
    .describe('Every resource the definition manages: agent identity, automation, webhook, scorer and runner uids'),
  runners: z
    .array(
      z.object({
        uid: z.string(),
        name: z.string(),
        description: z.string().nullable(),
        setup_commands: z.array(z.string()),
        instance_shape: z.object({ vcpus: z.number().int(), memory_gb: z.number().int() }).nullable(),
        platform: z.object({
          os: z.enum(['linux', 'macos']),
          arch: z.enum(['x86_64', 'aarch64']),
          docker_image: z.string().nullable(),
          mac_version: z.string().nullable(),
        }),
      }),
    )
    .describe("Runners live in the definition: an agent's default_runner_uid names one"),
  settings: json.describe(
    'factory.yaml as resolved: credential strategy, integrations, cloud providers, agent defaults',
  ),
});

export function toDefinitionResource(d: DefinitionDoc): z.infer<typeof definitionResource> {
  const { file_count: _count, ...version } = toDefinitionVersion(d);
  return {
    ...version,
    files: d.files,
    resources: d.resources.map(({ kind, name, uid }) => ({ kind, name, uid })),
    runners: d.runners,
    settings: d.factory as unknown as Record<string, unknown>,
  };
}

/** Branch operations need the `factory_branches` feature (FACTORY_BRANCHES). */
export function assertBranchesEnabled(config: { FACTORY_BRANCHES: boolean }): void {
  if (!config.FACTORY_BRANCHES)
    throw new DomainError(403, 'feature_not_available', 'Forbidden', 'factory branches are not enabled on this server');
}
