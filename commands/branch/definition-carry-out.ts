/**
 * Carrying a decided definition version out onto the resources it changes: webhooks, agent
 * identities, automations, scorers and the factory's own settings, each through its own feature's decider,
 * with the uids the version fixed. Every step compares with what its stream holds now and changes
 * only what differs, so carrying out a version twice (after a crash in the middle, or by two
 * processes) changes nothing the second time. `FactoryDefinitionCompleted` closes the version.
 *
 * The version is carried out by the apply that decided it, before it answers; by the start of any
 * process, before it serves (a process killed in the middle leaves the rest to the next start); by
 * the next apply of the factory; and by a sweep of every process, for a version left pending
 * longer than PENDING_GRACE_MS by a process that died while others serve.
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { DomainError } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { oneAtATime } from '../../src/kernel/per-key-queue.js';
import type { Runtime } from '../../src/runtime.js';
import type { Service } from '../../src/feature.js';
import { factoryDefinitionsProjection } from '../../projections/branch/factory-definitions.js';
import { automationsDecider } from '../automation/public.js';
import { type AutomationFields, automationsStream } from '../automation/events.js';
import { factoryDecider } from '../factory/public.js';
import { factoryStream } from '../factory/events.js';
import type { AgentSpec, AutomationSpec, Definition, FactorySpec } from '../factoryfile/public.js';
import { identityDecider } from '../identity/public.js';
import { type AgentProfile, identityStream } from '../identity/events.js';
import { scorerDecider, readScorerFile } from '../scorer/public.js';
import { type ScorerFields, scorerStream } from '../scorer/events.js';
import { webhooksDecider } from '../webhook/public.js';
import { webhooksStream } from '../webhook/events.js';
import { type AppliedData, definitionDecider } from './branch-decider.js';
import { type DefinitionEvent, definitionStream } from './events.js';
import { own, ownsKey } from '../../src/own-keys.js';

/** A version pending this long was left by a process that died: any process carries it out. */
const PENDING_GRACE_MS = 30_000;
const SWEEP_INTERVAL_MS = 5_000;

const inTurn = oneAtATime();

/** The profile fields a definition sets on an agent identity (others, set through the API, stay). */
const PROFILE_FIELDS = [
  'name',
  'agent_type',
  'description',
  'prompt',
  'base_model',
  'harness',
  'harness_auth_secrets',
  'credential_strategy',
  'default_runner_uid',
  'environment_id',
  'worker_host',
  'mcp_servers',
  'secrets',
  'factory_uid',
] as const;

/** An agent's identity profile as its file resolves it. */
function profileOf(
  agent: AgentSpec,
  factoryUid: string,
  factory: FactorySpec,
  runnerUid: (name: string) => string,
): AgentProfile {
  const { harness: h, runner, environment_id, worker_host, mcp_servers, secrets } = agent.execution;
  const authSecret = h.auth?.source === 'managedSecret' ? h.auth.secret_name : null;
  return {
    name: agent.name,
    agent_type: agent.agent_type,
    description: agent.description,
    prompt: agent.prompt,
    base_model: h.model === 'auto' ? null : h.model,
    harness:
      h.type === 'oz'
        ? null
        : { type: h.type, model: h.model, ...(h.reasoning_level ? { reasoning_level: h.reasoning_level } : {}) },
    harness_auth_secrets: authSecret ? { [`${h.type}_auth_secret_name`]: authSecret } : null,
    credential_strategy: agent.credential_strategy ?? factory.credential_strategy,
    default_runner_uid: runner ? runnerUid(runner) : null,
    environment_id,
    worker_host,
    mcp_servers: Object.keys(mcp_servers).length ? mcp_servers : null,
    secrets: secrets.length ? secrets.map((name) => ({ name })) : null,
    factory_uid: factoryUid,
  };
}

/** The run settings an automation's own declarations give its runs (the agent's own fill the rest). */
function runConfigOf(automation: AutomationSpec, runnerUid: (name: string) => string): Record<string, unknown> | null {
  const o = automation.overrides;
  const config: Record<string, unknown> = {};
  if (o.harness?.model && o.harness.model !== 'auto') config.model_id = o.harness.model;
  if (o.harness?.type && o.harness.type !== 'oz')
    config.harness = {
      type: o.harness.type,
      ...(o.harness.model ? { model_id: o.harness.model } : {}),
      ...(o.harness.reasoning_level ? { reasoning_level: o.harness.reasoning_level } : {}),
    };
  if (o.runner) config.runner_id = runnerUid(o.runner);
  if (o.environment_id) config.environment_id = o.environment_id;
  if (o.worker_host) config.worker_host = o.worker_host;
  if (o.mcp_servers) config.mcp_servers = o.mcp_servers;
  return Object.keys(config).length ? config : null;
}

const differs = (a: unknown, b: unknown) => JSON.stringify(a ?? null) !== JSON.stringify(b ?? null);

/** Carries `version` out, step by step; each step is a no-op when its stream already holds it. */
async function carry(rt: Runtime, version: AppliedData, definition: Definition, context: CommandContext) {
  const { factory_uid: f, team_uid: team } = version;
  const uidOf = (kind: string, name: string) => version.resources.find((r) => r.kind === kind && r.name === name)!.uid;
  const retired = (kind: string) => version.retired.filter((r) => r.kind === kind);
  const factory = await rt.state(factoryDecider, factoryStream(f));
  if (factory.status !== 'live') return; // deleted meanwhile: nothing of it is served any more
  const step = async (what: string, work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (error) {
      // Only a change made meanwhile through the API can refuse a step the plan checked.
      if (!(error instanceof DomainError)) throw error;
      rt.log.warn(
        { factory_uid: f, version: version.version, step: what, err: error.message },
        'definition step refused',
      );
    }
  };

  // Retirements first (automations and scorers name webhooks and agents; the per-factory limits
  // hold at every step), then webhooks, agents, automations and scorers, then retired agents.
  let automations = await rt.state(automationsDecider, automationsStream(f));
  for (const r of retired('automations'))
    if (ownsKey(automations.automations, r.uid))
      await step(`retire automation ${r.name}`, () =>
        rt.handle(
          automationsStream(f),
          automationsDecider,
          { type: 'DeleteAutomation', data: { id: r.uid, factory_uid: f, team_uid: team } },
          context,
        ),
      );
  for (const r of retired('scorers'))
    if ((await rt.state(scorerDecider, scorerStream(r.uid))).status === 'live')
      await step(`retire scorer ${r.name}`, () =>
        rt.handle(scorerStream(r.uid), scorerDecider, { type: 'DeleteScorer', data: { uid: r.uid } }, context),
      );
  const hooks = await rt.state(webhooksDecider, webhooksStream(f));
  for (const r of retired('webhooks'))
    if (own(hooks.webhooks, r.uid)?.deleted === false)
      await step(`retire webhook ${r.name}`, () =>
        rt.handle(webhooksStream(f), webhooksDecider, { type: 'DeleteWebhook', data: { uid: r.uid } }, context),
      );
  for (const w of definition.webhooks) {
    const uid = uidOf('webhooks', w.name);
    const now = own((await rt.state(webhooksDecider, webhooksStream(f))).webhooks, uid);
    const secret = { team_secret: w.secret_name };
    if (!now)
      await step(`create webhook ${w.name}`, () =>
        rt.handle(
          webhooksStream(f),
          webhooksDecider,
          {
            type: 'CreateWebhook',
            data: {
              uid,
              factory_uid: f,
              team_uid: team,
              name: w.name,
              auth_mode: w.auth_mode,
              signature_scheme: w.signature_scheme,
              delivery_id_header: w.delivery_id_header,
              enabled: w.enabled,
              secret,
            },
          },
          context,
        ),
      );
    else if (!now.deleted) {
      const changes = Object.fromEntries(
        Object.entries({ name: w.name, enabled: w.enabled, delivery_id_header: w.delivery_id_header }).filter(
          ([k, v]) => differs(v, now[k as keyof typeof now]),
        ),
      );
      const rotate = differs(now.secret, secret);
      if (Object.keys(changes).length || rotate)
        await step(`change webhook ${w.name}`, () =>
          rt.handle(
            webhooksStream(f),
            webhooksDecider,
            { type: 'UpdateWebhook', data: { uid, changes, ...(rotate ? { secret } : {}) } },
            context,
          ),
        );
    }
  }

  const runnerUid = (name: string) => uidOf('runners', name);
  for (const a of definition.agents) {
    const uid = uidOf('agents', a.name);
    const profile = profileOf(a, f, definition.factory, runnerUid);
    const now = await rt.state(identityDecider, identityStream(uid));
    if (now.status === 'none')
      await step(`create agent ${a.name}`, () =>
        rt.handle(
          identityStream(uid),
          identityDecider,
          { type: 'CreateIdentity', data: { uid, team_uid: team, profile, factory } },
          context,
        ),
      );
    else if (now.status === 'live') {
      const changes = Object.fromEntries(
        PROFILE_FIELDS.filter((k) => differs(profile[k], now.profile[k])).map((k) => [k, profile[k] ?? null]),
      ) as Partial<AgentProfile>;
      if (Object.keys(changes).length)
        await step(`change agent ${a.name}`, () =>
          rt.handle(
            identityStream(uid),
            identityDecider,
            { type: 'UpdateIdentity', data: { uid, changes, factory } },
            context,
          ),
        );
    }
  }

  automations = await rt.state(automationsDecider, automationsStream(f));
  const webhookStatuses = Object.fromEntries(
    Object.values((await rt.state(webhooksDecider, webhooksStream(f))).webhooks).map(
      (w) => [w.uid, w.deleted ? 'deleted' : 'live'] as const,
    ),
  );
  for (const au of definition.automations) {
    const id = uidOf('automations', au.name);
    const fields: AutomationFields = {
      name: au.name,
      prompt: au.prompt,
      agent: au.agent ? uidOf('agents', au.agent) : null,
      enabled: au.enabled,
      triggers: au.triggers,
      config: runConfigOf(au, runnerUid),
    };
    const target = { id, factory_uid: f, team_uid: team };
    if (ownsKey(automations.automations, id))
      await step(`change automation ${au.name}`, () =>
        rt.handle(
          automationsStream(f),
          automationsDecider,
          { type: 'UpdateAutomation', data: { ...target, changes: fields }, webhooks: webhookStatuses },
          context,
        ),
      );
    else if (!automations.deleted.includes(id))
      await step(`create automation ${au.name}`, () =>
        rt.handle(
          automationsStream(f),
          automationsDecider,
          { type: 'CreateAutomation', data: { ...target, ...fields }, webhooks: webhookStatuses },
          context,
        ),
      );
  }

  // Scorers, read from their files by the scorers feature's own file form, once their agents exist.
  for (const sc of definition.scorers) {
    const uid = uidOf('scorers', sc.name);
    const file = readScorerFile(sc.name, sc.source).scorer;
    if (!file) throw new Error(`the scorer file ${sc.path} of a decided version does not read`);
    const fields: ScorerFields = {
      ...file.fields,
      agents: file.agent_names.map((name) => ({ uid: uidOf('agents', name), include_descendants: false })),
    };
    const now = await rt.state(scorerDecider, scorerStream(uid));
    if (now.status === 'none')
      await step(`create scorer ${sc.name}`, () =>
        rt.handle(
          scorerStream(uid),
          scorerDecider,
          { type: 'CreateScorer', data: { ...fields, uid, factory_uid: f, team_uid: team } },
          context,
        ),
      );
    else if (now.status === 'live')
      await step(`change scorer ${sc.name}`, () =>
        rt.handle(scorerStream(uid), scorerDecider, { type: 'UpdateScorer', data: { uid, changes: fields } }, context),
      );
  }

  for (const r of retired('agents'))
    if ((await rt.state(identityDecider, identityStream(r.uid))).status === 'live')
      await step(`retire agent ${r.name}`, () =>
        rt.handle(identityStream(r.uid), identityDecider, { type: 'DeleteIdentity', data: { uid: r.uid } }, context),
      );

  const { name, alias, description, repositories } = definition.factory;
  await step('change the factory', () =>
    rt.handle(
      factoryStream(f),
      factoryDecider,
      { type: 'UpdateFactory', data: { uid: f, changes: { name, alias, description, repositories } } },
      context,
    ),
  );
}

/** The context of the steps: the version's own (who applied it, caused by its event). */
async function contextOf(rt: Runtime, version: AppliedData): Promise<CommandContext> {
  const events = (await rt.events.readStream(
    definitionStream(version.factory_uid),
  )) as RecordedEvent<DefinitionEvent>[];
  const decided = events.find((e) => e.type === 'FactoryDefinitionApplied' && e.data.version === version.version)!;
  return {
    now: rt.clock.now().toISOString(),
    actor: decided.metadata.actor,
    teams: { [version.team_uid]: 'member' },
    team_uid: version.team_uid,
    correlation_id: decided.metadata.correlation_id,
    causation_id: decided.id,
    request_id: decided.metadata.request_id,
  };
}

/** Carries out the factory's pending version, if any, and closes it; one at a time per factory. */
export function carryOut(rt: Runtime, factoryUid: string): Promise<void> {
  return inTurn(factoryUid, async () => {
    const { pending } = await rt.state(definitionDecider, definitionStream(factoryUid));
    if (!pending) return;
    const context = await contextOf(rt, pending);
    const bytes = await rt.blobs.read(pending.definition_blob);
    if (!bytes)
      throw new Error(`the definition blob ${pending.definition_blob} of ${factoryUid} v${pending.version} is missing`);
    await carry(rt, pending, JSON.parse(bytes.toString('utf8')) as Definition, context);
    await rt.execute(
      definitionStream(factoryUid),
      definitionDecider,
      { type: 'CompleteDefinition', data: { factory_uid: factoryUid, version: pending.version } },
      { ...context, actor: { type: 'system', uid: 'definition' }, teams: {} },
    );
  });
}

/** Versions decided and not carried out, decided before `before` (ISO), as the read model lists them. */
async function pendingVersions(rt: Runtime, before?: string) {
  const page = await rt
    .readModel(factoryDefinitionsProjection)
    .find({ filter: { state: 'applying' }, sort: [['id', 'asc']], limit: 1000 });
  return page.items.filter((d) => before === undefined || d.applied_at < before).map((d) => d.factory_uid);
}

/** At start, before anything is served: every version left pending is carried out. */
export async function carryOutPending(rt: Runtime): Promise<void> {
  await rt.projector.waitFor(await rt.events.headPosition());
  for (const factoryUid of await pendingVersions(rt)) await carryOut(rt, factoryUid);
}

/** While serving: versions left pending by a process that died, while this one serves the same store. */
export function pendingSweeper(rt: Runtime): Service {
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running
      .then(async () => {
        const before = new Date(rt.clock.now().getTime() - PENDING_GRACE_MS).toISOString();
        for (const factoryUid of await pendingVersions(rt, before)) await carryOut(rt, factoryUid);
      })
      .catch((error: unknown) => rt.log.error({ err: error }, 'carrying out a pending definition failed'));
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
