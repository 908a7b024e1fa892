/**
 * The reactions that turn runs and webhook deliveries into analytics facts:
 *
 * - `cost-ledger`: prices each usage report and each ended execution of a run, at the price list
 *   in force when it happened (the `models` stream before the run event's position), links each
 *   pull request a factory run reports to its tree, and counts the follow-ups people send. Every
 *   command names the run event it comes from; the ledger records each once.
 * - `pull-request-facts`: reads each delivery accepted on a factory's `signature`/`github` webhook
 *   and records what it says of a pull request (a push: of the open pull requests of its branch),
 *   as the webhook's team's own record of it: another team's record of the same URL is not touched.
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { reactionContext, reactor } from '../../src/projector/reactor.js';
import type { Runtime } from '../../src/runtime.js';
import { pullRequestsProjection } from '../../projections/analytics/pull-requests.js';
import { conversationDecider } from '../conversation/public.js';
import { conversationStream } from '../conversation/events.js';
import { type RunView, runState } from '../run/public.js';
import { type RunCreatedData, type RunEvent, runStream } from '../run/events.js';
import { webhookState } from '../webhook/public.js';
import type { DeliveryAccepted } from '../webhook/events.js';
import { type CostKeys, ledgerStream, pullRequestStream, UNKNOWN } from './events.js';
import { pullRequestFactsDecider } from './pull-request-facts-decider.js';
import { observeGithub, pullRequestRef } from './github.js';
import { type LedgerCommand, ledgerDecider } from './cost-ledger-decider.js';
import { priceListAt } from './prices.js';
import type { ExecutionTimes } from './pricing.js';

/** A run with its tree's root, as the ledger attributes them. */
interface Placed {
  run: RunCreatedData;
  root: RunCreatedData;
  /** The run's factory, else its tree's. */
  factory_uid: string | null;
}

async function placed(rt: Runtime, runId: string): Promise<Placed | null> {
  const view: RunView | null = await runState(rt, runId);
  if (!view) return null;
  const run = view.created;
  const root = run.root_run_id === run.run_id ? run : ((await runState(rt, run.root_run_id))?.created ?? run);
  return { run, root, factory_uid: run.factory_uid ?? root.factory_uid };
}

const keysOf = ({ run, root }: Placed): CostKeys => ({
  source: root.source,
  user: root.creator.uid,
  agent: run.agent_identity_uid ?? UNKNOWN,
  model: run.resolved?.model_id ?? (run.config?.model_id as string | undefined) ?? UNKNOWN,
});

const causeOf = (e: RecordedEvent) => ({ event_id: e.id, revision: Number(e.revision), at: e.metadata.occurred_at });

/**
 * Records a ledger entry. The reactor does not wait for the read models; a request that prices
 * its own run event (`priceReported`) does, so its answer and the next read show the price.
 */
const waiting = new WeakSet<RecordedEvent>();
const send = (rt: Runtime, event: RecordedEvent, root: string, command: LedgerCommand) =>
  (waiting.has(event) ? rt.execute : rt.handle)(
    ledgerStream(root),
    ledgerDecider,
    command,
    reactionContext(event, rt.clock.now()),
  );

/** The earliest run of the run's conversation: its inference is counted there. */
async function earliestOfConversation(rt: Runtime, run: RunCreatedData): Promise<string> {
  const conversation = await rt.state(conversationDecider, conversationStream(run.conversation_id));
  return conversation.runs[0]?.run_id ?? run.run_id;
}

/** When a run was created: the time of its first event. */
async function createdAt(rt: Runtime, runId: string): Promise<string | null> {
  const [first] = await rt.events.readStream(runStream(runId), { maxCount: 1 });
  return first?.metadata.occurred_at ?? null;
}

/**
 * The execution an ending event ends, from the run's stream up to it: the one a worker held (its
 * claim and start times), or null when none had been claimed (nothing ran on a machine).
 */
async function endedExecution(
  rt: Runtime,
  event: RecordedEvent<RunEvent>,
): Promise<{ execution_id: string; times: ExecutionTimes } | null> {
  const events = await rt.events.readStream(runStream(event.data.run_id));
  let current: { execution_id: string; claimed_at: string | null; started_at: string | null } | null = null;
  for (const e of events as Array<RecordedEvent<RunEvent>>) {
    if (e.revision >= event.revision) break;
    switch (e.type) {
      case 'RunLeased':
        current = {
          execution_id: (e.data as { execution_id: string }).execution_id,
          claimed_at: null,
          started_at: null,
        };
        break;
      case 'RunLeaseExpired':
      case 'RunFinished':
      case 'RunCancelled':
      case 'RunWorkerLost':
        current = null;
        break;
      case 'RunClaimed':
        if (current) current.claimed_at = e.metadata.occurred_at;
        break;
      case 'RunStarted':
        if (current) current.started_at = e.metadata.occurred_at;
        break;
    }
  }
  if (!current?.claimed_at) return null;
  const { execution_id, claimed_at, started_at } = current;
  return { execution_id, times: { claimed_at, started_at, ended_at: event.metadata.occurred_at } };
}

async function priceExecutionEnd(event: RecordedEvent<RunEvent>, rt: Runtime) {
  const where = await placed(rt, event.data.run_id);
  const ended = where && (await endedExecution(rt, event));
  if (!where || !ended) return;
  const runner = where.run.config?.runner_id;
  await send(rt, event, where.root.run_id, {
    type: 'PriceExecution',
    data: {
      root_run_id: where.root.run_id,
      run_id: where.run.run_id,
      factory_uid: where.factory_uid,
      team_uid: where.root.team_uid ?? where.root.executing_team_uid,
      keys: keysOf(where),
      cause: causeOf(event),
      price_list: await priceListAt(rt.events, event.position),
      execution_id: ended.execution_id,
      runner_id: typeof runner === 'string' ? runner : null,
      times: ended.times,
    },
  });
}

/** A follow-up from a person (not an agent or the system) to a factory run. */
async function countFollowUp(event: RecordedEvent<RunEvent>, rt: Runtime) {
  if (event.metadata.actor.type !== 'user') return;
  const where = await placed(rt, event.data.run_id);
  if (!where?.factory_uid) return;
  await send(rt, event, where.root.run_id, {
    type: 'CountFollowUp',
    data: { root_run_id: where.root.run_id, run_id: where.run.run_id, cause: causeOf(event) },
  });
}

export const costLedgerReactor = reactor<RunEvent, Runtime>({
  name: 'cost-ledger',
  replay: 'after-last-effect',
  on: {
    RunUsageReported: async (event, rt) => {
      const own = await placed(rt, event.data.run_id);
      if (!own) return;
      const attributedId = await earliestOfConversation(rt, own.run);
      const where = attributedId === own.run.run_id ? own : ((await placed(rt, attributedId)) ?? own);
      await send(rt, event, where.root.run_id, {
        type: 'PriceUsage',
        data: {
          root_run_id: where.root.run_id,
          run_id: own.run.run_id,
          attributed_run_id: where.run.run_id,
          factory_uid: where.factory_uid,
          team_uid: where.root.team_uid ?? where.root.executing_team_uid,
          keys: keysOf(where),
          cause: causeOf(event),
          price_list: await priceListAt(rt.events, event.position),
          usage: event.data.usage,
        },
      });
    },
    RunFinished: priceExecutionEnd,
    RunCancelled: priceExecutionEnd,
    RunWorkerLost: priceExecutionEnd,
    RunArtifactAdded: async (event, rt) => {
      const { artifact } = event.data;
      if (artifact.artifact_type !== 'PULL_REQUEST' || typeof artifact.url !== 'string') return;
      const ref = pullRequestRef(artifact.url);
      const where = ref && (await placed(rt, event.data.run_id));
      if (!ref || !where?.factory_uid) return;
      const { run, root } = where;
      await send(rt, event, root.run_id, {
        type: 'LinkPullRequest',
        data: {
          root_run_id: root.run_id,
          factory_uid: where.factory_uid,
          team_uid: root.team_uid ?? root.executing_team_uid,
          cause: causeOf(event),
          pr: { ...ref, branch: typeof artifact.branch === 'string' ? artifact.branch : null },
          run: {
            run_id: run.run_id,
            root_run_id: root.run_id,
            created_at: (await createdAt(rt, run.run_id)) ?? event.metadata.occurred_at,
            creator: run.creator,
            source: root.source,
            requested_model_id: run.resolved?.model_id ?? (run.config?.model_id as string | undefined) ?? null,
          },
        },
      });
    },
    RunFollowupDelivered: countFollowUp,
    RunPromptExtended: countFollowUp,
    RunResumed: countFollowUp,
  },
});

/**
 * The cost ledger's reaction to the last `count` events of a run, done by the request that wrote
 * them (a worker's usage report, artifact or finish) before it answers: the price is in the run's
 * `request_usage` at once, and the reactor, finding the entries made, records nothing again.
 */
export async function priceReported(rt: Runtime, runId: string, count: number): Promise<void> {
  const events = await rt.events.readStream(runStream(runId), { direction: 'backwards', maxCount: count });
  for (const event of events.reverse()) {
    const reaction = costLedgerReactor.on[event.type as RunEvent['type']] as
      | ((e: RecordedEvent, rt: Runtime) => Promise<void>)
      | undefined;
    if (!reaction) continue;
    waiting.add(event);
    await reaction(event, rt);
  }
}

/** How many open pull requests of one branch a push is recorded on, at most. */
const PUSH_FAN_OUT = 20;

export const pullRequestFactsReactor = reactor<DeliveryAccepted, Runtime>({
  name: 'pull-request-facts',
  replay: 'after-last-effect',
  on: {
    DeliveryAccepted: async (event, rt) => {
      const d = event.data;
      const webhook = await webhookState(rt, d.factory_uid, d.webhook_uid);
      if (webhook?.auth_mode !== 'signature' || webhook.signature_scheme !== 'github') return;
      const bytes = await rt.blobs.read(d.payload_blob);
      if (!bytes) return;
      let body: unknown;
      try {
        body = JSON.parse(bytes.toString('utf8'));
      } catch {
        return;
      }
      const facts = observeGithub(body, `delivery:${event.id}`, d.received_at);
      if (!facts) return;
      const common = {
        provider: 'github' as const,
        factory_uid: d.factory_uid,
        team_uid: d.team_uid,
        webhook_uid: d.webhook_uid,
        delivery_id: d.delivery_id,
        source_event_id: event.id,
        received_at: d.received_at,
      };
      const record = (pr_id: string, data: Omit<Parameters<typeof recordFacts>[2], 'pr_id'>) =>
        recordFacts(rt, event, { ...data, pr_id });
      if (facts.kind === 'pull_request') {
        const o = facts.observation;
        const ref = pullRequestRef(o.url || `https://github.com/${o.repo_full_name}/pull/${o.pr_number}`);
        if (ref?.provider !== 'github') return;
        await record(ref.pr_id, {
          ...common,
          ...o,
          url: ref.url,
          repo_full_name: ref.repo_full_name!,
          pr_number: ref.pr_number!,
        });
        return;
      }
      // A push changes the team's open pull requests whose head is the branch pushed.
      const page = await rt.readModel(pullRequestsProjection).find({
        filter: { team_uid: d.team_uid, repo_key: facts.repo_full_name.toLowerCase(), head_branch: facts.branch },
        sort: [['id', 'asc']],
        limit: PUSH_FAN_OUT,
      });
      for (const pr of page.items) {
        if (pr.state === 'merged' || pr.state === 'closed' || pr.repo_full_name === null || pr.pr_number === null)
          continue;
        await record(pr.pr_id, {
          ...common,
          url: pr.url,
          repo_full_name: pr.repo_full_name,
          pr_number: pr.pr_number,
          event: 'push',
          action: null,
          at: facts.at ?? d.received_at,
          sender: facts.sender,
          snapshot: null,
          interaction: facts.sender.human ? { kind: 'code_push', key: `sha:${facts.sha}` } : null,
          review: null,
        });
      }
    },
  },
});

async function recordFacts(
  rt: Runtime,
  event: RecordedEvent,
  data: Parameters<typeof pullRequestFactsDecider.decide>[0]['data'],
) {
  await rt.handle(
    pullRequestStream(data.team_uid, data.pr_id),
    pullRequestFactsDecider,
    { type: 'RecordFacts', data },
    reactionContext(event, rt.clock.now()),
  );
}
