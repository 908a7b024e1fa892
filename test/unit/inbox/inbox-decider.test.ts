/** The inbox decider: raise what the situation calls for once, clear what it no longer does, mark only what one receives. */
import { describe, expect, it } from 'vitest';
import { type Desired, inboxDecider, mayMark } from '../../../commands/inbox/inbox-decider.js';
import type { InboxEvent } from '../../../commands/inbox/events.js';
import { deciderSpec, fold, userContext } from '../../helpers/decider-spec.js';

const spec = deciderSpec(inboxDecider);
const place = { subject: 'task-1', team_uid: 't-1', factory_uid: 'f-1', task_uid: '1', outbound_webhook_uid: null };
const want = (key: string, uid = `n-${key}`, recipients = ['u-1']): Desired => ({
  notification_uid: uid,
  kind: 'failed',
  key,
  title: 'Failed',
  description: null,
  stage: 'IMPLEMENT',
  run_id: 'r-1',
  urls: [],
  questions: [],
  recipients,
});
const reconcile = (desired: Desired[]) => ({
  type: 'Reconcile' as const,
  data: { ...place, desired, reason: 'RunFinished' },
});
const raised = (key: string, uid = `n-${key}`): InboxEvent => ({
  type: 'NotificationRaised',
  data: { ...want(key, uid), ...place },
});

describe('inbox decider', () => {
  it('raises what is called for and not active, once', () => {
    spec
      .given([])
      .when(reconcile([want('a')]))
      .then([{ type: 'NotificationRaised', data: { notification_uid: 'n-a' } }]);
    spec
      .given([raised('a')])
      .when(reconcile([want('a', 'n-other')]))
      .thenNothingHappened();
  });

  it('clears what is no longer called for, naming its recipients and why', () => {
    spec
      .given([raised('a')])
      .when(reconcile([]))
      .then([
        { type: 'NotificationCleared', data: { notification_uid: 'n-a', recipients: ['u-1'], reason: 'RunFinished' } },
      ]);
  });

  it('raises a new notification when the key is called for again after it was cleared', () => {
    const cleared: InboxEvent = {
      type: 'NotificationCleared',
      data: {
        notification_uid: 'n-a',
        subject: 'task-1',
        team_uid: 't-1',
        factory_uid: 'f-1',
        kind: 'failed',
        recipients: ['u-1'],
        reason: 'x',
      },
    };
    spec
      .given([raised('a'), cleared])
      .when(reconcile([want('a', 'n-a2')]))
      .then([{ type: 'NotificationRaised', data: { notification_uid: 'n-a2' } }]);
    // A replayed reaction with the old uid raises nothing.
    spec
      .given([raised('a'), cleared])
      .when(reconcile([want('a', 'n-a')]))
      .thenNothingHappened();
  });

  it('raises nothing without recipients', () => {
    spec
      .given([])
      .when(reconcile([want('a', 'n-a', [])]))
      .thenNothingHappened();
  });

  it('marks read and unread for recipients of active notifications only', () => {
    const read = (uids: string[], user = 'u-1') => ({
      type: 'MarkRead' as const,
      data: { subject: 'task-1', notification_uids: uids, user_uid: user },
    });
    spec
      .given([raised('a')])
      .when(read(['n-a', 'n-a', 'missing']))
      .then([{ type: 'NotificationRead', data: { user_uid: 'u-1' } }]);
    spec
      .given([raised('a')])
      .when(read(['n-a'], 'u-2'), userContext('u-2'))
      .thenNothingHappened();
    spec
      .given([raised('a')])
      .when(read(['n-a']), userContext('u-1', { 't-2': 'admin' }))
      .thenNothingHappened();
    const state = fold(inboxDecider, [
      raised('a'),
      { type: 'NotificationRead', data: { notification_uid: 'n-a', subject: 'task-1', user_uid: 'u-1' } },
    ]);
    spec
      .given([
        raised('a'),
        { type: 'NotificationRead', data: { notification_uid: 'n-a', subject: 'task-1', user_uid: 'u-1' } },
      ])
      .when({ type: 'MarkUnread', data: { subject: 'task-1', notification_uids: ['n-a'], user_uid: 'u-1' } })
      .then([{ type: 'NotificationUnread' }]);
    expect(mayMark(state, 'n-a', 'u-1', { 't-1': 'member' })).toEqual({ ok: true });
    expect(mayMark(state, 'missing', 'u-1', {})).toEqual({ ok: true });
    expect(mayMark(state, 'n-a', 'u-2', { 't-1': 'member' })).toEqual({ ok: false, reason: 'not_recipient' });
    expect(mayMark(state, 'n-a', 'u-1', { 't-2': 'member' })).toEqual({ ok: false, reason: 'not_accessible' });
  });
});
