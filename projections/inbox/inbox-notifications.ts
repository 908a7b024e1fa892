/**
 * Inbox notifications, one document each: active ones for the `team` scope, cleared ones kept
 * (inactive) so that marking one read answers "no longer active" rather than "missing".
 */
import { projection } from '../../src/projector/projection.js';
import type { InboxEvent, NotificationRaisedData } from '../../commands/inbox/events.js';

export interface InboxNotificationDoc extends Omit<NotificationRaisedData, 'key'> {
  [field: string]: unknown;
  active: boolean;
  created_at: string;
  cleared_at: string | null;
  cleared_reason: string | null;
}

export const notificationDoc = (d: NotificationRaisedData, at: string): InboxNotificationDoc => {
  const { key: _key, ...rest } = d;
  return { ...rest, active: true, created_at: at, cleared_at: null, cleared_reason: null };
};

export const inboxNotificationsProjection = projection<InboxEvent, InboxNotificationDoc>({
  name: 'inbox_notifications',
  version: 1,
  indexes: [
    ['team_uid', 'active', 'created_at'],
    ['team_uid', 'active', 'factory_uid', 'created_at'],
  ],
  on: {
    NotificationRaised: (e, docs) => docs.put(e.data.notification_uid, notificationDoc(e.data, e.metadata.occurred_at)),
    NotificationCleared: (e, docs) =>
      docs.patch(e.data.notification_uid, {
        active: false,
        cleared_at: e.metadata.occurred_at,
        cleared_reason: e.data.reason,
      }),
  },
});
