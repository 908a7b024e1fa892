/**
 * What the inbox tells the event streams and the team's outbound webhooks: a notification raised
 * or cleared. Readable by the members of its team, as the team's inbox is (`GET /factory-inbox`).
 */
import { z } from 'zod';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Principal } from '../../src/http/principal.js';
import type { StreamEventSource, StreamItem } from '../../src/streams/stream-events.js';
import { STAGES } from '../task/events.js';
import { type InboxEvent, NOTIFICATION_KINDS } from './events.js';

/** Who may read a team's inbox: its members; within one team, that team's. */
const canReadInbox = (teamUid: string, principal: Principal, within: string | null = null): boolean =>
  principal.teams.has(teamUid) && (within === null || within === teamUid);

const raisedSchema = z.object({
  notification_uid: z.string(),
  kind: z.enum(NOTIFICATION_KINDS),
  factory_uid: z.string().nullable(),
  factory_task_uid: z.string().nullable(),
  outbound_webhook_uid: z.string().nullable(),
  title: z.string(),
  description: z.string().nullable(),
  stage: z.enum(STAGES).nullable(),
  run_id: z.string().nullable(),
  urls: z.array(z.string()),
  recipients: z.array(z.string()).describe('User uids'),
});

const clearedSchema = z.object({
  notification_uid: z.string(),
  kind: z.enum(NOTIFICATION_KINDS),
  factory_uid: z.string().nullable(),
  reason: z.string(),
});

function dataOf(e: InboxEvent): [string, Record<string, unknown>] | null {
  if (e.type === 'NotificationRaised') {
    const d = e.data;
    return [
      'inbox.notification_raised',
      {
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
    ];
  }
  if (e.type !== 'NotificationCleared') return null;
  const { notification_uid, kind, factory_uid, reason } = e.data;
  return ['inbox.notification_cleared', { notification_uid, kind, factory_uid, reason }];
}

async function mapNotification(_rt: unknown, event: RecordedEvent): Promise<StreamItem | null> {
  const e = event as unknown as Extract<InboxEvent, { type: 'NotificationRaised' | 'NotificationCleared' }>;
  const found = dataOf(e);
  if (!found) return null;
  const team = e.data.team_uid;
  return {
    type: found[0],
    data: found[1],
    team_uid: team,
    factory_uid: e.data.factory_uid,
    run: null,
    readable: (viewer) => canReadInbox(team, viewer.principal, viewer.team),
  };
}

export const inboxStreamEvents: StreamEventSource = {
  from: ['NotificationRaised', 'NotificationCleared'],
  types: {
    'inbox.notification_raised': {
      feeds: ['team'],
      description: 'A notification entered the inbox',
      schema: raisedSchema,
    },
    'inbox.notification_cleared': {
      feeds: ['team'],
      description: 'A notification left the inbox',
      schema: clearedSchema,
    },
  },
  map: mapNotification,
};
