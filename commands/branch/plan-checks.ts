/**
 * The checks of a planned version that need the service's state: the models, environments, team
 * secrets and webhook UIDs the files name, webhooks whose mode cannot change or whose secret
 * cannot serve them, and the per-factory limits with the resources made outside the files.
 */
import type { Runtime } from '../../src/runtime.js';
import { sealerFor } from '../../src/sealing.js';
import { MAX_AUTOMATIONS_PER_FACTORY } from '../automation/public.js';
import { environmentDecider } from '../environment/public.js';
import { environmentStream } from '../environment/events.js';
import type { LiveFactory } from '../factory/public.js';
import { type Definition, type Diagnostic, diagnostic, type StateReference } from '../factoryfile/public.js';
import { MAX_WEBHOOKS_PER_FACTORY, assertUsableSecret } from '../webhook/public.js';
import type { ManagedResource } from './events.js';
import type { LiveResources } from './live-resources.js';
import { own, ownsKey } from '../../src/own-keys.js';

/** The uids a plan gave the definition's resources, and what it retires. */
export interface Assigned {
  resources: ManagedResource[];
  retired: Array<Pick<ManagedResource, 'kind' | 'name' | 'uid'>>;
}

/** Every problem of the plan the service's state shows, in the order the checks find them. */
export async function stateDiagnostics(
  rt: Runtime,
  factory: LiveFactory,
  definition: Definition,
  references: readonly StateReference[],
  now: LiveResources,
  assigned: Assigned,
): Promise<Diagnostic[]> {
  return [
    ...(await referenceDiagnostics(rt, factory, references, now, assigned)),
    ...webhookDiagnostics(rt, definition, now, assigned),
    ...limitDiagnostics(now, assigned),
  ];
}

/** What only the service knows: whether each reference of the files names something of the team. */
async function referenceDiagnostics(
  rt: Runtime,
  factory: LiveFactory,
  references: readonly StateReference[],
  { catalogue, secrets, webhooks }: LiveResources,
  { retired }: Assigned,
): Promise<Diagnostic[]> {
  const diagnostics: Diagnostic[] = [];
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
  return diagnostics;
}

/** A webhook keeps its authMode and signatureScheme, and its team secret must serve it. */
function webhookDiagnostics(
  rt: Runtime,
  definition: Definition,
  { secrets, webhooks }: LiveResources,
  { resources }: Assigned,
): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const sealer = sealerFor(rt.config);
  for (const w of definition.webhooks) {
    const uid = resources.find((r) => r.kind === 'webhooks' && r.name === w.name)!.uid;
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
  return diagnostics;
}

/** The per-factory limits, counting the webhooks and automations made outside the files that stay. */
function limitDiagnostics({ live }: LiveResources, { resources, retired }: Assigned): Diagnostic[] {
  const staying = (kind: 'webhooks' | 'automations') => {
    const mine = new Set(resources.filter((r) => r.kind === kind).map((r) => r.uid));
    const gone = new Set(retired.filter((r) => r.kind === kind).map((r) => r.uid));
    return [...live[kind].keys()].filter((u) => !mine.has(u) && !gone.has(u)).length + mine.size;
  };
  const diagnostics: Diagnostic[] = [];
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
  return diagnostics;
}
