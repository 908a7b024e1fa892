/**
 * The inbox as the API takes and answers it: `InboxItem` of the hosted service (`is_read` in the
 * `mine` scope only), the read and unread outcomes, and a factory's notification routes.
 */
import { z } from 'zod';
import { limitParam, pageInfoSchema, uidParam } from '../../src/http/schemas.js';
import type { InboxNotificationDoc } from '../../projections/inbox/inbox-notifications.js';
import { STAGES } from '../task/events.js';
import { NOTIFICATION_KINDS, TASK_KINDS } from './events.js';

export const inboxListQuery = z
  .object({
    scope: z.enum(['mine', 'team']).default('mine'),
    factory_uid: uidParam.optional(),
    recipient_uid: uidParam.optional(),
    limit: limitParam(100, 50),
    cursor: z.string().max(1000).optional(),
  })
  .strict();

const question = z.object({
  id: z.string(),
  question: z.string(),
  options: z.array(z.string()),
  type: z.enum(['single_select', 'multi_select']),
  recommended_option_index: z.int().optional(),
});

const inboxItem = z.object({
  notification_uid: z.string(),
  factory_uid: z
    .string()
    .nullable()
    .describe('Null for team notifications (`webhook_disabled`, a team budget, a team run’s approval)'),
  factory_task_uid: z.string().nullable().describe('Null but for task notifications'),
  kind: z
    .enum(NOTIFICATION_KINDS)
    .describe(
      'Extensions: `webhook_disabled` (an outbound webhook the server disabled), `approval` (a run waiting for an admin’s approval), `budget` (a budget’s threshold passed, or its refusals), `queue_stalled` (queued runs wait with no worker connected), `run_timed_out` (a run stuck or running too long ended ERROR)',
    ),
  stage: z.enum(STAGES).nullable().describe("The task's stage when the notification was raised"),
  title: z.string(),
  description: z.string().optional(),
  created_at: z.string(),
  recipients: z
    .array(z.object({ uid: z.string(), email: z.string().optional() }))
    .describe('Live recipients (members of the team now), by uid'),
  is_read: z.boolean().optional().describe('`mine` scope only'),
  run_id: z.string().optional().describe('The run that produced it'),
  url: z.string().optional().describe('Legacy: the first of `urls`'),
  urls: z.array(z.string()).describe('Pull requests to review, or the disabled endpoint'),
  questions: z.array(question).optional().describe('What a `question` asks; answer with a follow-up to `run_id`'),
  outbound_webhook_uid: z.string().optional(),
});

export type InboxItem = z.infer<typeof inboxItem>;

export const inboxPage = z.object({ notifications: z.array(inboxItem), page_info: pageInfoSchema });

export const markBody = z.object({ notification_uids: z.array(uidParam).min(1).max(100) }).strict();

export const markAnswer = z.object({
  outcomes: z
    .array(
      z.object({
        notification_uid: z.string(),
        ok: z.boolean(),
        reason: z
          .enum(['not_accessible', 'not_active', 'not_recipient'])
          .optional()
          .describe('Why not: another team’s factory, cleared, or not received by the caller'),
      }),
    )
    .describe('In request order'),
});

export function toInboxItem(
  d: InboxNotificationDoc,
  recipients: InboxItem['recipients'],
  isRead: boolean | undefined,
): InboxItem {
  return {
    notification_uid: d.notification_uid,
    factory_uid: d.factory_uid,
    factory_task_uid: d.task_uid,
    kind: d.kind,
    stage: d.stage,
    title: d.title,
    ...(d.description ? { description: d.description } : {}),
    created_at: d.created_at,
    recipients,
    ...(isRead !== undefined ? { is_read: isRead } : {}),
    ...(d.run_id ? { run_id: d.run_id } : {}),
    ...(d.urls[0] ? { url: d.urls[0] } : {}),
    urls: d.urls,
    ...(d.kind === 'question' ? { questions: d.questions } : {}),
    ...(d.outbound_webhook_uid ? { outbound_webhook_uid: d.outbound_webhook_uid } : {}),
  };
}

export const routesParams = z.object({ factory_uid: uidParam });

export const inboxRoutes = z
  .object({
    routes: z
      .array(
        z
          .object({
            kinds: z.array(z.enum(TASK_KINDS)).max(TASK_KINDS.length).default([]).describe('Empty: every kind'),
            recipient_uids: z.array(uidParam).min(1).max(50),
          })
          .strict(),
      )
      .max(20),
  })
  .strict();

export const inboxRoutesAnswer = z.object({
  factory_uid: z.string(),
  routes: z.array(z.object({ kinds: z.array(z.enum(TASK_KINDS)), recipient_uids: z.array(z.string()) })),
});
