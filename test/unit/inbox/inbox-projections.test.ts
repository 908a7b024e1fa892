/** The inbox read models and the delivery log: given events, then documents; applied twice, the same. */
import { describe, expect, it } from 'vitest';
import { outboundDeliveriesProjection } from '../../../projections/outbound/outbound-deliveries.js';
import { inboxEntriesProjection } from '../../../projections/inbox/inbox-entries.js';
import { inboxNotificationsProjection } from '../../../projections/inbox/inbox-notifications.js';
import { project, recorded } from '../../helpers/projection-spec.js';

const raised = {
  type: 'NotificationRaised',
  data: {
    notification_uid: 'n-1',
    subject: 'task-k',
    team_uid: 't-1',
    factory_uid: 'f-1',
    task_uid: 'k',
    outbound_webhook_uid: null,
    kind: 'pr_review',
    key: 'pr_review:u',
    title: 'Review',
    description: null,
    stage: 'REVIEW',
    run_id: 'r-1',
    urls: ['u'],
    questions: [],
    recipients: ['u-1', 'u-2'],
  },
};
const read = { type: 'NotificationRead', data: { notification_uid: 'n-1', subject: 'task-k', user_uid: 'u-2' } };
const cleared = {
  type: 'NotificationCleared',
  data: {
    notification_uid: 'n-1',
    subject: 'task-k',
    team_uid: 't-1',
    factory_uid: 'f-1',
    kind: 'pr_review',
    recipients: ['u-1', 'u-2'],
    reason: 'TaskStageChanged',
  },
};

describe('inbox read models', () => {
  it('one copy per recipient with its read state, deleted when cleared; the notification kept inactive', async () => {
    for (const times of [1, 2]) {
      const entries = await project(inboxEntriesProjection, recorded([raised, read]), { times });
      expect(Object.keys(entries).sort()).toEqual(['n-1:u-1', 'n-1:u-2']);
      expect(entries['n-1:u-1']).toMatchObject({ is_read: false, recipient_uid: 'u-1', kind: 'pr_review' });
      expect(entries['n-1:u-2']).toMatchObject({ is_read: true });
      expect(await project(inboxEntriesProjection, recorded([raised, read, cleared]), { times })).toEqual({});
      const notifications = await project(inboxNotificationsProjection, recorded([raised, cleared]), { times });
      expect(notifications['n-1']).toMatchObject({ active: false, cleared_reason: 'TaskStageChanged' });
      expect(notifications['n-1']).not.toHaveProperty('key');
    }
  });

  it('a delivery keeps each attempt once, and its status', async () => {
    const events = recorded([
      {
        type: 'OutboundDeliveryScheduled',
        data: {
          delivery_id: 'd',
          webhook_uid: 'w',
          team_uid: 't',
          message_id: 'm',
          event_type: 'run.queued',
          body: '{}',
          source_event_id: 'e',
          scheduled_at: '2026-01-01T00:00:00Z',
        },
      },
      {
        type: 'OutboundDeliveryAttempted',
        data: {
          delivery_id: 'd',
          webhook_uid: 'w',
          team_uid: 't',
          attempt: 1,
          at: '2026-01-01T00:00:00Z',
          status_code: 500,
          latency_ms: 4,
          error: 'HTTP 500',
          outcome: 'retry',
          next_attempt_at: '2026-01-01T00:00:05Z',
        },
      },
      {
        type: 'OutboundDeliveryAttempted',
        data: {
          delivery_id: 'd',
          webhook_uid: 'w',
          team_uid: 't',
          attempt: 2,
          at: '2026-01-01T00:00:05Z',
          status_code: 200,
          latency_ms: 2,
          error: null,
          outcome: 'delivered',
          next_attempt_at: null,
        },
      },
    ]);
    for (const times of [1, 2]) {
      const docs = await project(outboundDeliveriesProjection, events, { times, batchSize: 1 });
      expect(docs.d).toMatchObject({ status: 'delivered', next_attempt_at: null });
      expect((docs.d as { attempts: Array<{ status_code: number }> }).attempts.map((a) => a.status_code)).toEqual([
        500, 200,
      ]);
    }
  });
});
