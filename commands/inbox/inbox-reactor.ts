/**
 * The inbox reactor: whenever something a notification depends on happens (a task's stage, its
 * current run's end or resumption, a question asked or answered, a pull request reported or
 * closed, an outbound webhook disabled), it works out what the subject's situation calls for now
 * and has the inbox decider raise and clear accordingly. Notification ids are derived from the
 * causing event, and the decider raises only what is not active yet, so replays do nothing twice.
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { derivedId, reactionContext, reactor } from '../../src/projector/reactor.js';
import type { Runtime } from '../../src/runtime.js';
import type { ConversationEvent } from '../conversation/events.js';
import { conversationDecider } from '../conversation/public.js';
import { conversationStream } from '../conversation/events.js';
import { outboundWebhookDecider } from '../outbound/public.js';
import { type OutboundWebhookEvent, outboundWebhooksStream } from '../outbound/events.js';
import type { RunEvent } from '../run/events.js';
import { runState } from '../run/public.js';
import { teamDecider } from '../team/public.js';
import { teamStream } from '../team/events.js';
import type { TaskEvent } from '../task/events.js';
import { type Desired, inboxDecider } from './inbox-decider.js';
import { inboxRoutesStream, inboxStream, outboundSubject, taskSubject } from './events.js';
import { inboxRoutesDecider, routedTo } from './inbox-routes-decider.js';
import { taskNotifications, taskSituation } from './task-situation.js';
import { own } from '../../src/own-keys.js';
import type { GuardrailSource } from '../guardrail/public.js';
import { onApproval, onBudget, onQueueStall, onTimedOut } from './guardrail-notices.js';
import type { QueueStallEvent } from '../guardrail/events.js';

type Source = TaskEvent | RunEvent | ConversationEvent | OutboundWebhookEvent | GuardrailSource | QueueStallEvent;

/** The members of a team now, from its own stream. */
async function membersOf(rt: Runtime, team: string): Promise<Set<string>> {
  const state = await rt.state(teamDecider, teamStream(team));
  return new Set(state.status === 'live' ? Object.keys(state.members) : []);
}

async function reconcile(
  rt: Runtime,
  event: RecordedEvent,
  place: {
    subject: string;
    team_uid: string;
    factory_uid: string | null;
    task_uid: string | null;
    outbound_webhook_uid: string | null;
  },
  desired: Omit<Desired, 'notification_uid'>[],
): Promise<void> {
  await rt.execute(
    inboxStream(place.subject),
    inboxDecider,
    {
      type: 'Reconcile',
      data: {
        ...place,
        desired: desired.map((d) => ({ ...d, notification_uid: derivedId(event, `inbox:${place.subject}:${d.key}`) })),
        reason: event.type,
      },
    },
    { ...reactionContext(event, rt.clock.now()), team_uid: place.team_uid || null },
  );
}

async function reconcileTask(rt: Runtime, event: RecordedEvent, taskUid: string): Promise<void> {
  const subject = taskSubject(taskUid);
  const situation = await taskSituation(rt, taskUid);
  if (!situation) {
    // Deleted: everything still active on it is cleared.
    const place = { subject, team_uid: '', factory_uid: null, task_uid: taskUid, outbound_webhook_uid: null };
    return reconcile(rt, event, place, []);
  }
  const { task } = situation;
  const [members, routes] = await Promise.all([
    membersOf(rt, task.team_uid),
    rt.state(inboxRoutesDecider, inboxRoutesStream(task.factory_uid)),
  ]);
  const author = task.author?.type === 'user' ? [task.author.uid] : [];
  const desired = taskNotifications(situation).map((n) => ({
    ...n,
    recipients: [...new Set([...author, ...routedTo(routes.routes, n.kind)])].filter((u) => members.has(u)),
  }));
  const place = {
    subject,
    team_uid: task.team_uid,
    factory_uid: task.factory_uid,
    task_uid: task.uid,
    outbound_webhook_uid: null,
  };
  await reconcile(rt, event, place, desired);
}

/** The task a run belongs to: the one bound to its root run's conversation. */
async function taskOfRun(rt: Runtime, runId: string): Promise<string | null> {
  const run = await runState(rt, runId);
  const root = run && (run.root_run_id === runId ? run : await runState(rt, run.root_run_id));
  if (!root) return null;
  return (await rt.state(conversationDecider, conversationStream(root.conversation_id))).task?.task_uid ?? null;
}

const onTask = async (event: RecordedEvent<TaskEvent>, rt: Runtime) => reconcileTask(rt, event, event.data.uid);

const onRun = async (event: RecordedEvent<RunEvent>, rt: Runtime) => {
  const task = await taskOfRun(rt, event.data.run_id);
  if (task) await reconcileTask(rt, event, task);
};

/** An outbound webhook endpoint the server disabled tells its owner, until it is enabled again or deleted. */
const onEndpoint = async (event: RecordedEvent<OutboundWebhookEvent>, rt: Runtime) => {
  const { uid, team_uid } = event.data;
  const endpoint = own((await rt.state(outboundWebhookDecider, outboundWebhooksStream(team_uid))).endpoints, uid);

  const members = await membersOf(rt, team_uid);
  const desired =
    endpoint && !endpoint.enabled && endpoint.disabled_reason
      ? [
          {
            kind: 'webhook_disabled' as const,
            key: `webhook_disabled:${endpoint.failing_since}`,
            title: `Outbound webhook disabled: ${endpoint.url}`.slice(0, 300),
            description: endpoint.disabled_reason,
            stage: null,
            run_id: null,
            urls: [endpoint.url],
            questions: [],
            recipients: members.has(endpoint.owner_uid) ? [endpoint.owner_uid] : [],
          },
        ]
      : [];
  const place = {
    subject: outboundSubject(uid),
    team_uid,
    factory_uid: null,
    task_uid: null,
    outbound_webhook_uid: uid,
  };
  await reconcile(rt, event, place, desired);
};

export const inboxReactor = reactor<Source, Runtime>({
  name: 'inbox',
  replay: 'after-last-effect',
  on: {
    TaskCreated: onTask,
    TaskStageChanged: onTask,
    TaskCancelled: onTask,
    TaskDeleted: onTask,
    ConversationRunAdded: async (event, rt) => {
      const conversation = await rt.state(conversationDecider, conversationStream(event.data.conversation_id));
      if (conversation.task) await reconcileTask(rt, event, conversation.task.task_uid);
    },
    RunStarted: onRun,
    RunFinished: onRun,
    RunCancelled: onRun,
    RunResumed: onRun,
    RunFollowupDelivered: onRun,
    RunPromptExtended: onRun,
    RunWorkerLost: onRun,
    RunArtifactAdded: onRun,
    RunQuestionAsked: onRun,
    OutboundWebhookDisabled: onEndpoint,
    OutboundWebhookUpdated: onEndpoint,
    OutboundWebhookDeleted: onEndpoint,
    BudgetThresholdReached: onBudget,
    BudgetRefused: onBudget,
    RunApprovalRequested: onApproval,
    RunApproved: onApproval,
    RunDenied: onApproval,
    RunApprovalExpired: onApproval,
    RunTimedOut: onTimedOut,
    QueueStalled: onQueueStall,
    QueueStallEnded: onQueueStall,
  },
});
