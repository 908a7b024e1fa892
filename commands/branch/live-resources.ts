/**
 * What a definition version is planned against: the factory's resources live now, by kind
 * (uid → name, each told by its own stream), and the states the plan's checks read.
 */
import type { Runtime } from '../../src/runtime.js';
import { automationsDecider } from '../automation/public.js';
import { automationsStream } from '../automation/events.js';
import type { LiveFactory } from '../factory/public.js';
import type { ResourceKind } from '../factoryfile/public.js';
import { identitiesProjection, identityDecider } from '../identity/public.js';
import { identityStream } from '../identity/events.js';
import { modelDecider } from '../model/public.js';
import { MODELS_STREAM } from '../model/events.js';
import { scorersProjection, scorerDecider } from '../scorer/public.js';
import { scorerStream } from '../scorer/events.js';
import { teamSecretsDecider } from '../secret/public.js';
import { teamSecretsStream } from '../secret/events.js';
import { webhooksDecider } from '../webhook/public.js';
import { webhooksStream } from '../webhook/events.js';
import type { DefinitionState } from './branch-decider.js';

export type LiveResources = Awaited<ReturnType<typeof liveResources>>;

export async function liveResources(rt: Runtime, factory: LiveFactory, current: DefinitionState) {
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
  return { webhooks, secrets, catalogue, live };
}
