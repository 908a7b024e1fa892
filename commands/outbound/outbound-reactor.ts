/**
 * The outbound reactor (its own checkpoint): each event an endpoint subscribes to is scheduled
 * for it as a delivery, whose id is derived from the event and the endpoint, so an event seen
 * twice (a replay, a second process) is scheduled once. It only records; the dispatcher sends.
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { derivedId, reactionContext, reactor } from '../../src/projector/reactor.js';
import type { Runtime } from '../../src/runtime.js';
import { deliveryDecider } from './outbound-delivery-decider.js';
import { wakeDispatcher } from './dispatcher.js';
import { outboundDeliveryStream, outboundWebhooksStream, subscribes } from './events.js';
import { outboundWebhookDecider } from './outbound-webhook-decider.js';
import { outboundMessage } from './messages.js';
import type { BudgetPeriodEvent } from '../guardrail/events.js';
import type { InboxEvent } from '../inbox/events.js';
import type { RunEvent } from '../run/events.js';
import type { TaskEvent } from '../task/events.js';
import type { DeliveryEvent } from '../webhook/events.js';

type SourceEvent = RunEvent | TaskEvent | InboxEvent | DeliveryEvent | BudgetPeriodEvent;

async function schedule(event: RecordedEvent<SourceEvent>, rt: Runtime): Promise<void> {
  const occurred = event.metadata.occurred_at;
  // An event older than the retry window (a read store rebuilt from scratch replays them all) is not news.
  if (rt.clock.now().getTime() - Date.parse(occurred) > rt.config.OUTBOUND_RETRY_HOURS * 3_600_000) return;
  const message = await outboundMessage(rt, event);
  if (!message) return;
  const { endpoints } = await rt.state(outboundWebhookDecider, outboundWebhooksStream(message.team_uid));
  const targets = Object.values(endpoints).filter(
    (e) => e.enabled && e.created_at <= occurred && subscribes(e.event_types, message.type),
  );
  if (!targets.length) return;
  const message_id = `msg_${derivedId(event, 'outbound-message')}`;
  const body = JSON.stringify({ type: message.type, timestamp: occurred, data: message.data });
  const context = { ...reactionContext(event, rt.clock.now()), team_uid: message.team_uid };
  for (const endpoint of targets) {
    const delivery_id = derivedId(event, `outbound:${endpoint.uid}`);
    await rt.execute(
      outboundDeliveryStream(delivery_id),
      deliveryDecider,
      {
        type: 'ScheduleDelivery',
        data: {
          delivery_id,
          webhook_uid: endpoint.uid,
          team_uid: message.team_uid,
          message_id,
          event_type: message.type,
          body,
          source_event_id: event.id,
          scheduled_at: context.now,
        },
      },
      context,
    );
  }
  wakeDispatcher(rt);
}

export const outboundReactor = reactor<SourceEvent, Runtime>({
  name: 'outbound-webhooks',
  replay: 'after-last-effect',
  on: {
    RunCreated: schedule,
    RunResumed: schedule,
    RunStarted: schedule,
    RunFinished: schedule,
    RunCancelled: schedule,
    RunWorkerLost: schedule,
    TaskStageChanged: schedule,
    TaskCancelled: schedule,
    NotificationRaised: schedule,
    NotificationCleared: schedule,
    DeliveryRejected: schedule,
    BudgetThresholdReached: schedule,
    BudgetRefused: schedule,
    RunApprovalRequested: schedule,
    RunApproved: schedule,
    RunDenied: schedule,
    RunApprovalExpired: schedule,
  },
});
