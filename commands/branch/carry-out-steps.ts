/**
 * The steps of carrying a decided version out, one per kind of resource, each through its own
 * feature's decider and only where its stream differs from the version (see definition-carry-out.ts).
 * Retirements come first (automations and scorers name webhooks and agents; the per-factory limits
 * hold at every step), then webhooks, agents, automations and scorers, then retired agents, then
 * the factory's own settings.
 */
import { DomainError } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { automationsDecider } from '../automation/public.js';
import { type AutomationFields, automationsStream } from '../automation/events.js';
import { factoryDecider } from '../factory/public.js';
import { type FactoryState, factoryStream } from '../factory/events.js';
import type { Definition } from '../factoryfile/public.js';
import { identityDecider } from '../identity/public.js';
import { type AgentProfile, identityStream } from '../identity/events.js';
import { scorerDecider, readScorerFile } from '../scorer/public.js';
import { type ScorerFields, scorerStream } from '../scorer/events.js';
import { webhooksDecider } from '../webhook/public.js';
import { webhooksStream } from '../webhook/events.js';
import type { AppliedData } from './branch-decider.js';
import { PROFILE_FIELDS, profileOf, runConfigOf } from './definition-settings.js';
import { own, ownsKey } from '../../src/own-keys.js';

/** What every step is given: the version, its definition, and how a step runs. */
interface Carrying {
  rt: Runtime;
  version: AppliedData;
  definition: Definition;
  context: CommandContext;
  /** The factory as its stream holds it (live). */
  factory: FactoryState;
  uidOf: (kind: string, name: string) => string;
  retired: (kind: string) => AppliedData['retired'];
  /** Runs a step; a step refused by a change made meanwhile through the API is logged and skipped. */
  step: (what: string, work: () => Promise<unknown>) => Promise<void>;
}

const differs = (a: unknown, b: unknown) => JSON.stringify(a ?? null) !== JSON.stringify(b ?? null);

export function carrying(
  rt: Runtime,
  version: AppliedData,
  definition: Definition,
  context: CommandContext,
  factory: FactoryState,
): Carrying {
  return {
    rt,
    version,
    definition,
    context,
    factory,
    uidOf: (kind, name) => version.resources.find((r) => r.kind === kind && r.name === name)!.uid,
    retired: (kind) => version.retired.filter((r) => r.kind === kind),
    step: async (what, work) => {
      try {
        await work();
      } catch (error) {
        // Only a change made meanwhile through the API can refuse a step the plan checked.
        if (!(error instanceof DomainError)) throw error;
        rt.log.warn(
          { factory_uid: version.factory_uid, version: version.version, step: what, err: error.message },
          'definition step refused',
        );
      }
    },
  };
}

/** The automations, scorers and webhooks the version retires. */
export async function retireFirst({ rt, version, context, retired, step }: Carrying): Promise<void> {
  const { factory_uid: f, team_uid: team } = version;
  const automations = await rt.state(automationsDecider, automationsStream(f));
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
}

export async function carryWebhooks({ rt, version, definition, context, uidOf, step }: Carrying): Promise<void> {
  const { factory_uid: f, team_uid: team } = version;
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
}

export async function carryAgents(c: Carrying): Promise<void> {
  const { rt, version, definition, context, factory, uidOf, step } = c;
  for (const a of definition.agents) {
    const uid = uidOf('agents', a.name);
    const profile = profileOf(a, version.factory_uid, definition.factory, (name) => uidOf('runners', name));
    const now = await rt.state(identityDecider, identityStream(uid));
    if (now.status === 'none')
      await step(`create agent ${a.name}`, () =>
        rt.handle(
          identityStream(uid),
          identityDecider,
          { type: 'CreateIdentity', data: { uid, team_uid: version.team_uid, profile, factory } },
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
}

export async function carryAutomations({ rt, version, definition, context, uidOf, step }: Carrying): Promise<void> {
  const { factory_uid: f, team_uid: team } = version;
  const automations = await rt.state(automationsDecider, automationsStream(f));
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
      config: runConfigOf(au, (name) => uidOf('runners', name)),
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
}

/** Scorers, read from their files by the scorers feature's own file form, once their agents exist. */
export async function carryScorers({ rt, version, definition, context, uidOf, step }: Carrying): Promise<void> {
  const { factory_uid: f, team_uid: team } = version;
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
}

/** The agents the version retires, once nothing of it names them. */
export async function retireAgents({ rt, context, retired, step }: Carrying): Promise<void> {
  for (const r of retired('agents'))
    if ((await rt.state(identityDecider, identityStream(r.uid))).status === 'live')
      await step(`retire agent ${r.name}`, () =>
        rt.handle(identityStream(r.uid), identityDecider, { type: 'DeleteIdentity', data: { uid: r.uid } }, context),
      );
}

/** The factory's own settings: its name, alias, description and repositories. */
export async function carryFactory({ rt, version, definition, context, step }: Carrying): Promise<void> {
  const { name, alias, description, repositories } = definition.factory;
  await step('change the factory', () =>
    rt.handle(
      factoryStream(version.factory_uid),
      factoryDecider,
      {
        type: 'UpdateFactory',
        data: { uid: version.factory_uid, changes: { name, alias, description, repositories } },
      },
      context,
    ),
  );
}
