/**
 * Carrying a decided definition version out onto the resources it changes: webhooks, agent
 * identities, automations, scorers and the factory's own settings, each through its own feature's decider,
 * with the uids the version fixed (carry-out-steps.ts). Every step compares with what its stream holds now and changes
 * only what differs, so carrying out a version twice (after a crash in the middle, or by two
 * processes) changes nothing the second time. `FactoryDefinitionCompleted` closes the version.
 *
 * The version is carried out by the apply that decided it, before it answers; by the start of any
 * process, before it serves (a process killed in the middle leaves the rest to the next start); by
 * the next apply of the factory; and by a sweep of every process, for a version left pending
 * longer than PENDING_GRACE_MS by a process that died while others serve.
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { oneAtATime } from '../../src/kernel/per-key-queue.js';
import type { Runtime } from '../../src/runtime.js';
import type { Service } from '../../src/feature.js';
import { factoryDefinitionsProjection } from '../../projections/branch/factory-definitions.js';
import { factoryDecider } from '../factory/public.js';
import { factoryStream } from '../factory/events.js';
import type { Definition } from '../factoryfile/public.js';
import { type AppliedData, definitionDecider } from './branch-decider.js';
import {
  carryAgents,
  carryAutomations,
  carryFactory,
  carryScorers,
  carryWebhooks,
  carrying,
  retireAgents,
  retireFirst,
} from './carry-out-steps.js';
import { type DefinitionEvent, definitionStream } from './events.js';

/** A version pending this long was left by a process that died: any process carries it out. */
const PENDING_GRACE_MS = 30_000;
const SWEEP_INTERVAL_MS = 5_000;

const inTurn = oneAtATime();

/** Carries `version` out, step by step; each step is a no-op when its stream already holds it. */
async function carry(rt: Runtime, version: AppliedData, definition: Definition, context: CommandContext) {
  const factory = await rt.state(factoryDecider, factoryStream(version.factory_uid));
  if (factory.status !== 'live') return; // deleted meanwhile: nothing of it is served any more
  const steps = carrying(rt, version, definition, context, factory);
  await retireFirst(steps);
  await carryWebhooks(steps);
  await carryAgents(steps);
  await carryAutomations(steps);
  await carryScorers(steps);
  await retireAgents(steps);
  await carryFactory(steps);
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
