/** A replay of an accepted delivery: one event on its own stream, written once. */
import type { Decider } from '../../src/kernel/decider.js';
import { Conflict, Forbidden } from '../../src/kernel/errors.js';
import type { DeliveryReplayed } from './events.js';
import { ownsKey } from '../../src/own-keys.js';

export type ReplayCommand = { type: 'ReplayDelivery'; data: DeliveryReplayed['data'] };

export const replayDecider: Decider<ReplayCommand, DeliveryReplayed, { replayed: boolean }> = {
  initialState: () => ({ replayed: false }),
  evolve: () => ({ replayed: true }),
  decide: (command, state, context) => {
    if (context.actor.type !== 'user') throw new Forbidden('only users can replay deliveries');
    if (!ownsKey(context.teams, command.data.team_uid)) throw new Forbidden("not a member of the webhook's team");
    if (state.replayed) throw new Conflict(`replay ${command.data.replay_id} exists`);
    return [{ type: 'DeliveryReplayed', data: command.data }];
  },
};
