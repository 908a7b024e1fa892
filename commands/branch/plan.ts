/**
 * Planning a definition version: which uid each resource of the files stands for (the one the
 * definition in force gave it; else a live resource of the factory with that name, taken over;
 * else a new one), what the version retires, and every check that needs the service's state
 * (models, environments, team secrets, webhook UIDs, limits). A version with a problem is not
 * decided: its diagnostics are the answer, and the definition in force stays.
 */
import { timeOrderedId } from '../../src/ids.js';
import type { Runtime } from '../../src/runtime.js';
import { sealerFor } from '../../src/sealing.js';
import { identitiesProjection, identityDecider } from '../identity/public.js';
import { scorersProjection, scorerDecider } from '../scorer/public.js';
import { MAX_AUTOMATIONS_PER_FACTORY, automationsDecider } from '../automation/public.js';
import { automationsStream } from '../automation/events.js';
import { environmentDecider } from '../environment/public.js';
import { environmentStream } from '../environment/events.js';
import type { LiveFactory } from '../factory/public.js';
import {
  canonicalJson,
  type Definition,
  RESOURCE_KINDS,
  type ResourceKind,
  resourceHashes,
  type StateReference,
  type Diagnostic,
  diagnostic,
} from '../factoryfile/public.js';
import { identityStream } from '../identity/events.js';
import { modelDecider } from '../model/public.js';
import { MODELS_STREAM } from '../model/events.js';
import { scorerStream } from '../scorer/events.js';
import { teamSecretsDecider } from '../secret/public.js';
import { teamSecretsStream } from '../secret/events.js';
import { MAX_WEBHOOKS_PER_FACTORY, webhooksDecider, assertUsableSecret } from '../webhook/public.js';
import { webhooksStream } from '../webhook/events.js';
import type { AppliedData, DefinitionState } from './branch-decider.js';
import type { BranchContent, ManagedResource } from './events.js';
import { changesOf } from './resource.js';
import { own, ownsKey } from '../../src/own-keys.js';

export type Planned = Omit<AppliedData, 'version'>;

export async function planVersion(
  rt: Runtime,
  factory: LiveFactory,
  branch: { uid: string; name: string; content: BranchContent },
  definition: Definition,
  references: readonly StateReference[],
  current: DefinitionState,
): Promise<{ planned: Planned; diagnostics: [] } | { planned: null; diagnostics: Diagnostic[] }> {
  const diagnostics: Diagnostic[] = [];
  const [automations, webhooks, secrets, catalogue, agents, scorers] = await Promise.all([
    rt.state(automationsDecider, automationsStream(factory.uid)),
    rt.state(webhooksDecider, webhooksStream(factory.uid)),
    rt.state(teamSecretsDecider, teamSecretsStream(factory.team_uid)),
    rt.state(modelDecider, MODELS_STREAM),
    rt
      .readModel(identitiesProjection)
      .find({ filter: { factory_uid: factory.uid }, sort: [['id', 'asc']], limit: 1000 }),
    rt.readModel(scorersProjection).find({ filter: { factory_uid: factory.uid }, sort: [['id', 'asc']], limit: 1000 }),
  ]);
  const liveAgents = new Map<string, string>(); // uid -> name, told by each agent's own stream
  for (const a of agents.items) {
    const state = await rt.state(identityDecider, identityStream(a.uid));
    if (state.status === 'live' && state.team_uid === factory.team_uid && state.profile.factory_uid === factory.uid)
      liveAgents.set(a.uid, state.profile.name);
  }
  const liveScorers = new Map<string, string>(); // uid -> name, told by each scorer's own stream
  const scorerUids = new Set([
    ...scorers.items.map((s) => s.uid),
    ...current.resources.filter((r) => r.kind === 'scorers').map((r) => r.uid),
  ]);
  for (const uid of scorerUids) {
    const state = await rt.state(scorerDecider, scorerStream(uid));
    if (state.status === 'live' && state.factory_uid === factory.uid) liveScorers.set(uid, state.name);
  }
  const liveHooks = Object.values(webhooks.webhooks).filter((w) => !w.deleted);
  const live: Record<ResourceKind, Map<string, string>> = {
    agents: liveAgents,
    automations: new Map(Object.values(automations.automations).map((a) => [a.id, a.name])),
    webhooks: new Map(liveHooks.map((w) => [w.uid, w.name])),
    scorers: liveScorers,
    // Runners are kept by the definition itself: what it managed is what lives.
    runners: new Map(current.resources.filter((r) => r.kind === 'runners').map((r) => [r.uid, r.name])),
  };

  const hashes = resourceHashes(definition);
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
  const uidOf = (kind: ResourceKind, name: string) => resources.find((r) => r.kind === kind && r.name === name)!.uid;

  // What only the service knows.
  const refused = (ref: StateReference, message: string) =>
    diagnostics.push(diagnostic('FF_INVALID_REFERENCE', ref.path, `${ref.field}: ${message}`, ref));
  const retiredHooks = new Set(retired.filter((r) => r.kind === 'webhooks').map((r) => r.uid));
  for (const ref of references) {
    switch (ref.kind) {
      case 'model_id': {
        const model = catalogue.catalogue?.models.find((m) => m.id === ref.value);
        if (!model) refused(ref, `no model ${ref.value} in the catalogue (GET /agent/models lists them)`);
        else if (model.disable_reason) refused(ref, `the model ${ref.value} is disabled (${model.disable_reason})`);
        break;
      }
      case 'environment_id': {
        const env = await rt.state(environmentDecider, environmentStream(ref.value));
        if (env.status !== 'live' || env.team_uid !== factory.team_uid)
          refused(ref, `no environment ${ref.value} in the team (GET /agent/environments lists them)`);
        break;
      }
      case 'secret_name':
        if (!ownsKey(secrets.secrets, ref.value))
          refused(ref, `no team secret ${ref.value} (POST /teams/{team_uid}/secrets makes one)`);
        break;
      case 'webhook_uid': {
        const hook = own(webhooks.webhooks, ref.value);
        if (!hook || hook.deleted || retiredHooks.has(ref.value))
          refused(
            ref,
            `no webhook ${ref.value} in this factory${hook && !hook.deleted ? ' once this version retires it' : ''}: a webhook's UID is given when its file is first applied`,
          );
        break;
      }
    }
  }
  const sealer = sealerFor(rt.config);
  for (const w of definition.webhooks) {
    const uid = uidOf('webhooks', w.name);
    const now = own(webhooks.webhooks, uid);
    if (now && !now.deleted && (now.auth_mode !== w.auth_mode || now.signature_scheme !== w.signature_scheme))
      diagnostics.push(
        diagnostic(
          'FF_INVALID_VALUE',
          w.path,
          `the webhook ${w.name} is ${now.auth_mode}${now.signature_scheme ? `/${now.signature_scheme}` : ''}: its authMode and signatureScheme cannot change (declare a webhook of another name, move the sender, then remove this one)`,
        ),
      );
    const stored = own(secrets.secrets, w.secret_name);
    if (stored) {
      try {
        assertUsableSecret(sealer.open(stored.sealed) ?? '', w.auth_mode, w.signature_scheme);
      } catch (error) {
        diagnostics.push(
          diagnostic(
            'FF_INVALID_VALUE',
            w.path,
            `secretName: the team secret ${w.secret_name} cannot serve this webhook: ${(error as Error).message}`,
          ),
        );
      }
    }
  }
  const staying = (kind: 'webhooks' | 'automations') => {
    const mine = new Set(resources.filter((r) => r.kind === kind).map((r) => r.uid));
    const gone = new Set(retired.filter((r) => r.kind === kind).map((r) => r.uid));
    return [...live[kind].keys()].filter((u) => !mine.has(u) && !gone.has(u)).length + mine.size;
  };
  if (staying('webhooks') > MAX_WEBHOOKS_PER_FACTORY)
    diagnostics.push(
      diagnostic(
        'FF_INVALID_VALUE',
        'factory.yaml',
        `with the webhooks made outside the files, the factory would have more than ${MAX_WEBHOOKS_PER_FACTORY}`,
      ),
    );
  if (staying('automations') > MAX_AUTOMATIONS_PER_FACTORY)
    diagnostics.push(
      diagnostic(
        'FF_INVALID_VALUE',
        'factory.yaml',
        `with the automations made outside the files, the factory would have more than ${MAX_AUTOMATIONS_PER_FACTORY}`,
      ),
    );
  if (diagnostics.length) return { planned: null, diagnostics };

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
