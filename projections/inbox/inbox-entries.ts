/**
 * Each recipient's copy of each active notification, with whether they have read it: the
 * `mine` scope (and `recipient_uid`) seeks one person's inbox by index. A cleared notification's
 * copies are deleted with it.
 */
import { projection } from '../../src/projector/projection.js';
import type { InboxEvent } from '../../commands/inbox/events.js';
import { type InboxNotificationDoc, notificationDoc } from './inbox-notifications.js';

export interface InboxEntryDoc extends InboxNotificationDoc {
  recipient_uid: string;
  is_read: boolean;
}

const entryId = (notificationUid: string, userUid: string) => `${notificationUid}:${userUid}`;

export const inboxEntriesProjection = projection<InboxEvent, InboxEntryDoc>({
  name: 'inbox_entries',
  version: 1,
  indexes: [
    ['recipient_uid', 'team_uid', 'created_at'],
    ['recipient_uid', 'team_uid', 'factory_uid', 'created_at'],
  ],
  on: {
    NotificationRaised: (e, docs) => {
      const doc = notificationDoc(e.data, e.metadata.occurred_at);
      for (const recipient_uid of e.data.recipients)
        docs.put(entryId(e.data.notification_uid, recipient_uid), { ...doc, recipient_uid, is_read: false });
    },
    NotificationCleared: (e, docs) => {
      for (const user of e.data.recipients) docs.delete(entryId(e.data.notification_uid, user));
    },
    NotificationRead: (e, docs) => docs.patch(entryId(e.data.notification_uid, e.data.user_uid), { is_read: true }),
    NotificationUnread: (e, docs) => docs.patch(entryId(e.data.notification_uid, e.data.user_uid), { is_read: false }),
  },
});
