/**
 * The inbox's part of the guardrails (issue #33): a budget's month keeps one notice per threshold
 * passed and one for its refusals (not one per refusal), and a run waiting for approval one notice
 * until it is decided, each to the team's admins.
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { derivedId, reactionContext } from '../../src/projector/reactor.js';
import type { Runtime } from '../../src/runtime.js';
import { approvalNotice, budgetNotices, type GuardrailSource, runNoticePlace } from '../guardrail/public.js';
import { teamDecider } from '../team/public.js';
import { teamStream } from '../team/events.js';
import { inboxDecider } from './inbox-decider.js';
import { inboxStream } from './events.js';
import type { QueueStallEvent } from '../guardrail/events.js';

async function adminsOf(rt: Runtime, team: string): Promise<string[]> {
  const state = await rt.state(teamDecider, teamStream(team));
  return state.status === 'live'
    ? Object.entries(state.members).flatMap(([u, role]) => (role === 'admin' ? [u] : []))
    : [];
}

type Notice = {
  subject: string;
  team_uid: string;
  factory_uid: string | null;
  notices: Array<{
    kind: 'budget' | 'approval' | 'queue_stalled' | 'run_timed_out';
    key: string;
    title: string;
    description: string;
    run_id: string | null;
  }>;
};

async function reconcileNotice(rt: Runtime, event: RecordedEvent, notice: Notice): Promise<void> {
  const { subject, team_uid, factory_uid } = notice;
  const recipients = await adminsOf(rt, team_uid);
  const desired = notice.notices.map((n) => ({
    ...n,
    stage: null,
    urls: [],
    questions: [],
    recipients,
    notification_uid: derivedId(event, `inbox:${subject}:${n.key}`),
  }));
  await rt.execute(
    inboxStream(subject),
    inboxDecider,
    {
      type: 'Reconcile',
      data: { subject, team_uid, factory_uid, task_uid: null, outbound_webhook_uid: null, desired, reason: event.type },
    },
    { ...reactionContext(event, rt.clock.now()), team_uid },
  );
}

/** A budget's threshold passed, or its first refusal of the month. */
export async function onBudget(event: RecordedEvent<GuardrailSource>, rt: Runtime): Promise<void> {
  const e = event as GuardrailSource;
  if (e.type !== 'BudgetThresholdReached' && e.type !== 'BudgetRefused') return;
  if (e.type === 'BudgetRefused' && e.data.refusal !== 1) return;
  await reconcileNotice(rt, event, await budgetNotices(rt, e.data.scope, e.data.period));
}

/** A team's queue stalled, or no longer is: one notice while it lasts. */
export async function onQueueStall(event: RecordedEvent<QueueStallEvent>, rt: Runtime): Promise<void> {
  const e = event as QueueStallEvent;
  const { team_uid } = e.data;
  const notices =
    e.type === 'QueueStalled'
      ? [
          {
            kind: 'queue_stalled' as const,
            key: `stalled:${event.id}`,
            title: `${e.data.queued_runs} queued run(s) wait with no worker connected`,
            description: `The oldest has waited since ${e.data.oldest_queued_at}; start a worker (shopfloor worker)`,
            run_id: null,
          },
        ]
      : [];
  await reconcileNotice(rt, event, { subject: `queue-${team_uid}`, team_uid, factory_uid: null, notices });
}

/** A run stuck, or running too long, ended ERROR: its team's admins hear which, once. */
export async function onTimedOut(event: RecordedEvent<GuardrailSource>, rt: Runtime): Promise<void> {
  const e = event as GuardrailSource;
  if (e.type !== 'RunTimedOut') return;
  const place = await runNoticePlace(rt, e.data.run_id);
  if (!place) return;
  const what = e.data.rule === 'stuck' ? 'made no progress for too long' : 'ran past its maximum duration';
  const key = `timed_out:${e.data.execution_id}`;
  await reconcileNotice(rt, event, {
    ...place,
    subject: `timedout-${e.data.run_id}`,
    notices: [
      { kind: 'run_timed_out', key, title: `A run ${what} and ended ERROR`, description: what, run_id: e.data.run_id },
    ],
  });
}

/** A run's approval was asked for or decided. */
export async function onApproval(event: RecordedEvent<GuardrailSource>, rt: Runtime): Promise<void> {
  const e = event as GuardrailSource;
  const notice = await approvalNotice(rt, (e.data as { run_id: string }).run_id, e.type === 'RunApprovalRequested');
  if (notice) await reconcileNotice(rt, event, notice);
}
