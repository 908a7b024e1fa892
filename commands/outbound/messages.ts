/**
 * What each event tells the team's endpoints: its outbound type and payload, in the Standard
 * Webhooks shape `{type, timestamp, data}`. The names and payloads are the event streams' own
 * (each feature registers them: its `streamEvents`); outbound webhooks send the types of
 * OUTBOUND_EVENT_TYPES among them, to the team that owns the resource. Personal runs tell no team.
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { StreamEventSource } from '../../src/streams/stream-events.js';
import { guardrailStreamEvents } from '../guardrail/public.js';
import { inboxStreamEvents } from '../inbox/public.js';
import { runApprovalEvents, runStateEvents } from '../run/public.js';
import { taskStreamEvents } from '../task/public.js';
import { webhookStreamEvents } from '../webhook/public.js';
import { OUTBOUND_EVENT_TYPES, type OutboundEventType } from './events.js';

export interface OutboundMessage {
  team_uid: string;
  type: OutboundEventType;
  data: Record<string, unknown>;
}

const SOURCES: readonly StreamEventSource[] = [
  runStateEvents,
  taskStreamEvents,
  inboxStreamEvents,
  webhookStreamEvents,
  guardrailStreamEvents,
  runApprovalEvents,
];

const isOutbound = (type: string): type is OutboundEventType =>
  (OUTBOUND_EVENT_TYPES as readonly string[]).includes(type);

/** The message `event` sends, or null when it tells the endpoints nothing. */
export async function outboundMessage(rt: Runtime, event: RecordedEvent): Promise<OutboundMessage | null> {
  for (const source of SOURCES) {
    if (!source.from.includes(event.type)) continue;
    const item = await source.map(rt, event);
    if (!item || item.team_uid === null || !isOutbound(item.type)) continue;
    const data = source.types[item.type]!.schema.parse(item.data) as Record<string, unknown>;
    return { team_uid: item.team_uid, type: item.type, data };
  }
  return null;
}
