/**
 * What each event tells the team's endpoints: its outbound type and payload, in the Standard
 * Webhooks shape `{type, timestamp, data}`. Personal runs (no team) tell no team.
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { InboxEvent } from '../inbox/events.js';
import { type FinishState, type RunEvent, type RunState, runStream } from '../run/events.js';
import { runDecider } from '../run/public.js';
import { taskState } from '../task/public.js';
import type { TaskEvent } from '../task/events.js';
import type { DeliveryEvent } from '../webhook/events.js';
import type { OutboundEventType } from './events.js';
import { type GuardrailSource, guardrailMessage } from '../guardrail/public.js';

export type SourceEvent = RunEvent | TaskEvent | InboxEvent | DeliveryEvent | GuardrailSource;

export interface OutboundMessage {
  team_uid: string;
  type: OutboundEventType;
  data: Record<string, unknown>;
}

const FINISHED: Record<FinishState, OutboundEventType> = {
  SUCCEEDED: 'run.succeeded',
  FAILED: 'run.failed',
  ERROR: 'run.errored',
  BLOCKED: 'run.blocked',
};

async function runMessage(rt: Runtime, runId: string, type: OutboundEventType, state: RunState) {
  const run = await rt.state(runDecider, runStream(runId));
  if (run.status !== 'live' || run.team_uid === null) return null;
  const c = run.created;
  return {
    team_uid: run.team_uid,
    type,
    data: {
      run_id: runId,
      state,
      title: c.title,
      factory_uid: c.factory_uid,
      conversation_id: c.conversation_id,
      parent_run_id: c.parent_run_id,
      root_run_id: c.root_run_id,
      source: c.source,
      creator: c.creator,
      status_message: state === run.state ? run.status_message : null,
      run_url: `${rt.config.publicBaseUrl}/api/v1/agent/runs/${runId}`,
    },
  };
}

/** The message `event` sends, or null when it tells the endpoints nothing. */
export async function outboundMessage(rt: Runtime, event: RecordedEvent<SourceEvent>): Promise<OutboundMessage | null> {
  const e = event as SourceEvent;
  switch (e.type) {
    case 'RunCreated':
    case 'RunResumed':
      return runMessage(rt, e.data.run_id, 'run.queued', 'QUEUED');
    case 'RunStarted':
      return runMessage(rt, e.data.run_id, 'run.in_progress', 'INPROGRESS');
    case 'RunFinished':
      return runMessage(rt, e.data.run_id, FINISHED[e.data.state], e.data.state);
    case 'RunCancelled':
      return runMessage(rt, e.data.run_id, 'run.cancelled', 'CANCELLED');
    case 'RunWorkerLost':
      return e.data.requeued ? null : runMessage(rt, e.data.run_id, 'run.errored', 'ERROR');
    case 'TaskStageChanged':
    case 'TaskCancelled': {
      const task = await taskState(rt, e.data.uid);
      if (task.status !== 'live') return null;
      const to = e.type === 'TaskCancelled' ? 'CANCELLED' : e.data.to;
      return {
        team_uid: task.team_uid,
        type: 'task.stage_changed',
        data: {
          task_uid: task.uid,
          factory_uid: task.factory_uid,
          title: task.title,
          conversation_id: task.conversation_id,
          from: e.data.from,
          to,
        },
      };
    }
    case 'NotificationRaised': {
      const d = e.data;
      return {
        team_uid: d.team_uid,
        type: 'inbox.notification_raised',
        data: {
          notification_uid: d.notification_uid,
          kind: d.kind,
          factory_uid: d.factory_uid,
          factory_task_uid: d.task_uid,
          outbound_webhook_uid: d.outbound_webhook_uid,
          title: d.title,
          description: d.description,
          stage: d.stage,
          run_id: d.run_id,
          urls: d.urls,
          recipients: d.recipients,
        },
      };
    }
    case 'NotificationCleared': {
      const d = e.data;
      return {
        team_uid: d.team_uid,
        type: 'inbox.notification_cleared',
        data: { notification_uid: d.notification_uid, kind: d.kind, factory_uid: d.factory_uid, reason: d.reason },
      };
    }
    case 'DeliveryRejected': {
      const d = e.data;
      return {
        team_uid: d.team_uid,
        type: 'webhook.delivery_rejected',
        data: {
          webhook_uid: d.webhook_uid,
          factory_uid: d.factory_uid,
          delivery_id: d.delivery_id,
          reason: d.reason,
          size_bytes: d.size_bytes,
          received_at: d.received_at,
        },
      };
    }
    default:
      return guardrailMessage(rt, event);
  }
}
