/**
 * One delivery of one event to one endpoint: scheduled once, then each attempt recorded once (an
 * attempt numbered other than the next changes nothing, so two dispatchers never record one twice),
 * until it is delivered, gives up or is abandoned.
 */
import type { Decider } from '../../src/kernel/decider.js';
import type { OutboundDeliveryEvent } from './events.js';

type Scheduled = Extract<OutboundDeliveryEvent, { type: 'OutboundDeliveryScheduled' }>['data'];
type Attempted = Extract<OutboundDeliveryEvent, { type: 'OutboundDeliveryAttempted' }>['data'];

type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'abandoned';

export type DeliveryState =
  | { status: 'none' }
  | (Scheduled & {
      status: DeliveryStatus;
      attempts: number;
      next_attempt_at: string | null;
      first_attempt_at: string | null;
    });

export type DeliveryCommand =
  | { type: 'ScheduleDelivery'; data: Scheduled }
  | { type: 'RecordAttempt'; data: Omit<Attempted, 'webhook_uid' | 'team_uid'> }
  | { type: 'AbandonDelivery'; data: { delivery_id: string; reason: string } };

export const deliveryDecider: Decider<DeliveryCommand, OutboundDeliveryEvent, DeliveryState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    if (event.type === 'OutboundDeliveryScheduled')
      return {
        ...event.data,
        status: 'pending',
        attempts: 0,
        next_attempt_at: event.data.scheduled_at,
        first_attempt_at: null,
      };
    if (state.status === 'none') return state;
    if (event.type === 'OutboundDeliveryAbandoned') return { ...state, status: 'abandoned', next_attempt_at: null };
    const { attempt, outcome, next_attempt_at, at } = event.data;
    const status: DeliveryStatus = outcome === 'retry' ? 'pending' : outcome;
    return { ...state, attempts: attempt, status, next_attempt_at, first_attempt_at: state.first_attempt_at ?? at };
  },

  decide: (command, state) => {
    switch (command.type) {
      case 'ScheduleDelivery':
        return state.status === 'none' ? [{ type: 'OutboundDeliveryScheduled', data: command.data }] : [];
      case 'RecordAttempt': {
        if (state.status !== 'pending' || command.data.attempt !== state.attempts + 1) return [];
        const { webhook_uid, team_uid } = state;
        return [{ type: 'OutboundDeliveryAttempted', data: { ...command.data, webhook_uid, team_uid } }];
      }
      case 'AbandonDelivery': {
        if (state.status !== 'pending') return [];
        const { webhook_uid, team_uid } = state;
        return [{ type: 'OutboundDeliveryAbandoned', data: { ...command.data, webhook_uid, team_uid } }];
      }
    }
  },
};
