/**
 * The factory inbox: the notifications of one subject (a task, or an outbound webhook endpoint)
 * in one stream, `inbox-<subject>`, so that which of them are active, who receives each and who
 * has read it are decided together; and each factory's notification routes, `inboxroutes-<uid>`.
 */
import type { RunQuestion } from '../run/events.js';
import type { Stage } from '../task/events.js';

/**
 * The kinds the hosted service knows, and extensions: `webhook_disabled` (an outbound webhook
 * endpoint the server turned off), `approval` (a run waiting for an admin), `budget` (a budget's
 * threshold passed, or its refusals), `queue_stalled` (runs wait with no worker connected) and
 * `run_timed_out` (a run stuck or running too long ended ERROR), for the team's admins.
 */
export const NOTIFICATION_KINDS = [
  'question',
  'answer_question',
  'spec_review',
  'pr_review',
  'blocked',
  'failed',
  'webhook_disabled',
  'approval',
  'budget',
  'queue_stalled',
  'run_timed_out',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** The kinds a factory's routes may name (the task kinds). */
export const TASK_KINDS = ['question', 'spec_review', 'pr_review', 'blocked', 'failed'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

/** What a notification says: everything but its identity and who receives it. */
export interface NotificationContent {
  kind: NotificationKind;
  /** What it is about within its subject (a question's ask, a run's end, the PRs under review): one active per key. */
  key: string;
  title: string;
  description: string | null;
  stage: Stage | null;
  run_id: string | null;
  urls: string[];
  questions: RunQuestion[];
}

export interface NotificationRaisedData extends NotificationContent {
  notification_uid: string;
  subject: string;
  team_uid: string;
  factory_uid: string | null;
  task_uid: string | null;
  outbound_webhook_uid: string | null;
  /** User uids, in the order they were routed. */
  recipients: string[];
}

export type InboxEvent =
  | { type: 'NotificationRaised'; data: NotificationRaisedData }
  /** No longer relevant: it leaves the inbox. Names its place and recipients, so read models drop every copy. */
  | {
      type: 'NotificationCleared';
      data: {
        notification_uid: string;
        subject: string;
        team_uid: string;
        factory_uid: string | null;
        kind: NotificationKind;
        recipients: string[];
        reason: string;
      };
    }
  | { type: 'NotificationRead'; data: { notification_uid: string; subject: string; user_uid: string } }
  | { type: 'NotificationUnread'; data: { notification_uid: string; subject: string; user_uid: string } };

/** One route: these users also receive the factory's notifications of these kinds (all kinds when empty). */
export interface InboxRoute {
  kinds: TaskKind[];
  recipient_uids: string[];
}

export type InboxRoutesEvent = {
  type: 'InboxRoutesSet';
  data: { factory_uid: string; team_uid: string; routes: InboxRoute[] };
};

export const taskSubject = (taskUid: string) => `task-${taskUid}`;
export const outboundSubject = (webhookUid: string) => `outbound-${webhookUid}`;
export const inboxStream = (subject: string) => `inbox-${subject}`;
export const inboxRoutesStream = (factoryUid: string) => `inboxroutes-${factoryUid}`;
