/**
 * The rules of one subject's notifications. The inbox reactor says which notifications the
 * subject's situation calls for now (`Reconcile`); the decider raises those not yet active and
 * clears the active ones no longer called for, so a replayed or repeated reconciliation changes
 * nothing. People mark the active notifications they receive read or unread.
 */
import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import type { InboxEvent, NotificationContent, NotificationKind } from './events.js';
import { own, ownsKey } from '../../src/own-keys.js';

export type Desired = NotificationContent & { notification_uid: string; recipients: string[] };

export type InboxCommand =
  | {
      type: 'Reconcile';
      data: {
        subject: string;
        team_uid: string;
        factory_uid: string | null;
        task_uid: string | null;
        outbound_webhook_uid: string | null;
        desired: Desired[];
        /** Why the cleared ones are cleared: the causing event's type. */
        reason: string;
      };
    }
  | { type: 'MarkRead' | 'MarkUnread'; data: { subject: string; notification_uids: string[]; user_uid: string } };

interface Held {
  key: string;
  kind: NotificationKind;
  active: boolean;
  team_uid: string;
  factory_uid: string | null;
  recipients: string[];
  read_by: string[];
}

export type InboxState = { notifications: Record<string, Held> };

/**
 * Whether `user` may mark the notification: a missing one is a successful no-op; an existing one
 * must be of one of the caller's teams (the factory's), active, and received by the caller.
 */
export function mayMark(
  state: InboxState,
  uid: string,
  user: string,
  teams: DecideContext['teams'],
): { ok: true } | { ok: false; reason: 'not_accessible' | 'not_active' | 'not_recipient' } {
  const n = own(state.notifications, uid);
  if (!n) return { ok: true };
  if (!ownsKey(teams, n.team_uid)) return { ok: false, reason: 'not_accessible' };
  if (!n.active) return { ok: false, reason: 'not_active' };
  if (!n.recipients.includes(user)) return { ok: false, reason: 'not_recipient' };
  return { ok: true };
}

export const inboxDecider: Decider<InboxCommand, InboxEvent, InboxState> = {
  initialState: () => ({ notifications: {} }),

  evolve: (state, event) => {
    const { notification_uid: uid } = event.data;
    const n = own(state.notifications, uid);
    const set = (held: Held) => ({ notifications: { ...state.notifications, [uid]: held } });
    switch (event.type) {
      case 'NotificationRaised': {
        const d = event.data;
        return set({
          key: d.key,
          kind: d.kind,
          active: true,
          team_uid: d.team_uid,
          factory_uid: d.factory_uid,
          recipients: d.recipients,
          read_by: [],
        });
      }
      case 'NotificationCleared':
        return n ? set({ ...n, active: false }) : state;
      case 'NotificationRead':
        return n
          ? set({ ...n, read_by: [...n.read_by.filter((u) => u !== event.data.user_uid), event.data.user_uid] })
          : state;
      case 'NotificationUnread':
        return n ? set({ ...n, read_by: n.read_by.filter((u) => u !== event.data.user_uid) }) : state;
    }
  },

  decide: (command, state, context) => {
    const active = Object.entries(state.notifications).filter(([, n]) => n.active);
    switch (command.type) {
      case 'Reconcile': {
        const { desired, reason, ...place } = command.data;
        const wanted = new Set(desired.map((d) => d.key));
        const events: InboxEvent[] = [];
        for (const [notification_uid, n] of active) {
          if (wanted.has(n.key)) continue;
          events.push({
            type: 'NotificationCleared',
            data: {
              notification_uid,
              subject: place.subject,
              team_uid: n.team_uid,
              factory_uid: n.factory_uid,
              kind: n.kind,
              recipients: n.recipients,
              reason,
            },
          });
        }
        const raised = new Set(active.map(([, n]) => n.key));
        for (const d of desired) {
          // A uid already used (a replay of an old reaction) raises nothing: the next reaction will.
          if (raised.has(d.key) || ownsKey(state.notifications, d.notification_uid) || d.recipients.length === 0)
            continue;
          raised.add(d.key);
          events.push({ type: 'NotificationRaised', data: { ...d, ...place } });
        }
        return events;
      }
      case 'MarkRead':
      case 'MarkUnread': {
        const { subject, notification_uids, user_uid } = command.data;
        const events: InboxEvent[] = [];
        for (const uid of new Set(notification_uids)) {
          const n = own(state.notifications, uid);
          if (!n || !mayMark(state, uid, user_uid, context.teams).ok) continue;
          const read = n.read_by.includes(user_uid);
          if (command.type === 'MarkRead' && !read)
            events.push({ type: 'NotificationRead', data: { notification_uid: uid, subject, user_uid } });
          if (command.type === 'MarkUnread' && read)
            events.push({ type: 'NotificationUnread', data: { notification_uid: uid, subject, user_uid } });
        }
        return events;
      }
    }
  },
};
