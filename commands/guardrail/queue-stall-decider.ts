/**
 * Whether a team's queue is stalled (`queuestall-<team_uid>`): queued runs waited past the
 * threshold with no worker of the team connected. Told once when it begins, and once when it ends
 * (a worker connected, or nothing waits that long any more), not once per run or per sweep.
 */
import type { Decider } from '../../src/kernel/decider.js';
import type { QueueStallEvent } from './events.js';

export type QueueStallCommand =
  | { type: 'ReportStall'; data: { team_uid: string; oldest_queued_at: string; queued_runs: number } }
  | { type: 'EndStall'; data: { team_uid: string } };

export type QueueStallState = { stalled: boolean };

export const queueStallDecider: Decider<QueueStallCommand, QueueStallEvent, QueueStallState> = {
  initialState: () => ({ stalled: false }),
  evolve: (_state, event) => ({ stalled: event.type === 'QueueStalled' }),
  decide: (command, state) => {
    if (command.type === 'ReportStall') return state.stalled ? [] : [{ type: 'QueueStalled', data: command.data }];
    return state.stalled ? [{ type: 'QueueStallEnded', data: command.data }] : [];
  },
};
