/** The factory as its own stream says: live and of one of the caller's teams (the system sees all). */
import type { DecideContext } from '../../src/kernel/decider.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { factoryDecider } from './factory-decider.js';
import { type FactoryState, factoryStream } from './events.js';
import { ownsKey } from '../../src/own-keys.js';

export type LiveFactory = Extract<FactoryState, { status: 'live' }>;

export async function liveFactory(
  rt: Runtime,
  uid: string,
  context: Pick<DecideContext, 'actor' | 'teams'>,
): Promise<LiveFactory> {
  const factory = await rt.state(factoryDecider, factoryStream(uid));
  if (factory.status !== 'live' || (context.actor.type !== 'system' && !ownsKey(context.teams, factory.team_uid)))
    throw new NotFound('factory', uid);
  return factory;
}
