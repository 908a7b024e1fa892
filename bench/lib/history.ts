/**
 * Deterministic event histories, as rows of the SQLite event store, typed against the events of
 * commands/ so that a change of shape fails `tsc` here rather than silently benchmarking stale data.
 *
 * Every history starts the way a fresh install does (bootstrap claim, admin user with the bench
 * key, first team), so the server starts on it without bootstrapping and the bench key works.
 * - `mixed`: a real-looking history of many teams. About 70% of its events are agent runs and
 *   factory tasks: runs created through the API (some orchestrating sub-runs) or dispatched to a
 *   factory's foreman, whose task then moves through its stages with a run per stage; each run
 *   leased, claimed and started by a worker of its team, recording timeline entries, messages,
 *   usage and artifacts, and finishing (or cancelled, resumed, lost with its worker). The rest:
 *   factories created, updated several times, some deleted; agent identities (foremen linked to
 *   factories) with keys, updated, some deleted; users joining teams. Streams interleave in time
 *   as they would in production: a few hundred runs and tasks are under way at any moment, so the
 *   history ends with some of them still queued or held.
 * - `one-team`: `size` factories of the admin's team (a fifth of them updated once).
 * - `tasks-runs`, for HTTP: the admin's team with a handful of factories (each with a foreman),
 *   `size` runs, and `tasks` tasks each bound to the conversation of one of those runs (the others
 *   are conversations without a task). Runs end in every state but a held one (no worker holds a
 *   run, so the server's sweeper never writes), and tasks stand in every stage.
 * - `two-teams`, for the lists: the admin's team with `size` runs and a second team of the admin's
 *   with `tasks` runs, their runs interleaved in time, each team with one factory (and its
 *   foreman) that a third of the runs are dispatched to, each of those with a task.
 */
import { createHash } from 'node:crypto';
import type { EventMetadata, NewEvent } from '../../src/eventstore/port.js';
import { derivedId } from '../../src/projector/reactor.js';
import { dispatchedTaskReactor } from '../../commands/task/task-reactor.js';
import type { ConversationEvent } from '../../commands/conversation/events.js';
import type { FactoryEvent } from '../../commands/factory/events.js';
import type { AgentType, IdentityEvent } from '../../commands/identity/events.js';
import type {
  Artifact,
  FinishState,
  RunCreatedData,
  RunEvent,
  RunMode,
  RunSource,
  RunState,
  StatusMessage,
} from '../../commands/run/events.js';
import type { Stage, TaskEvent } from '../../commands/task/events.js';
import type { TeamEvent } from '../../commands/team/events.js';
import type { EmailReserved, UserEvent } from '../../commands/user/events.js';

export const BENCH_ADMIN_KEY = 'sf_bench_admin_key_0123456789abcdef';

export interface HistoryRow {
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
}

export type HistoryKind = 'mixed' | 'one-team' | 'tasks-runs' | 'two-teams';

/** Words that occur in factory names. */
const CITIES = [
  'Lisbon',
  'Porto',
  'Madrid',
  'Seville',
  'Valencia',
  'Bilbao',
  'Lyon',
  'Marseille',
  'Toulouse',
  'Nantes',
  'Hamburg',
  'Munich',
  'Cologne',
  'Dresden',
  'Leipzig',
  'Vienna',
  'Graz',
  'Zurich',
  'Basel',
  'Geneva',
  'Milan',
  'Turin',
  'Naples',
  'Florence',
  'Bologna',
  'Krakow',
  'Gdansk',
  'Prague',
  'Brno',
  'Budapest',
  'Oslo',
  'Bergen',
  'Uppsala',
  'Malmo',
  'Helsinki',
  'Tampere',
  'Tallinn',
  'Riga',
  'Vilnius',
  'Dublin',
  'Cork',
  'Glasgow',
  'Leeds',
  'Bristol',
  'Antwerp',
  'Ghent',
  'Utrecht',
  'Eindhoven',
  'Aarhus',
  'Odense',
] as const;
const KINDS = ['assembly', 'packaging', 'paint shop', 'foundry', 'press line', 'welding', 'test bench', 'kitting'];
const AGENT_TYPES: AgentType[] = ['FOREMAN', 'TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'VERIFY', 'CUSTOM'];

const VERBS = ['Fix', 'Add', 'Refactor', 'Investigate', 'Speed up', 'Document', 'Remove', 'Upgrade', 'Test', 'Migrate'];
const OBJECTS = [
  'the flaky checkout test',
  'retries in the payment client',
  'the order export job',
  'pagination of the audit log',
  'the login rate limiter',
  'stale cache entries after deploys',
  'the nightly report',
  'webhook signature checks',
  'the inventory sync',
  'dark mode on the settings page',
  'the CSV importer',
  'slow queries on the dashboard',
];
const MODELS = ['claude-sonnet-4', 'gpt-5', 'gemini-2.5-pro', 'claude-opus-4'];
/** Run sources besides the API (imports from the hosted service); none of them is exempt from cancelling. */
const OTHER_SOURCES: RunSource[] = ['SLACK', 'LINEAR', 'CLI', 'WEB_APP', 'SCHEDULED_AGENT', 'JIRA'];
const STATUS: Record<Exclude<FinishState, 'SUCCEEDED'>, StatusMessage> = {
  FAILED: { message: 'The change did not pass its checks', error_code: 'task_failed', retryable: false },
  ERROR: { message: 'The sandbox ran out of memory', error_code: 'internal_error', retryable: true },
  BLOCKED: { message: 'Waiting for access to the staging database', error_code: 'blocked_on_input' },
};
/** The stages a factory task moves through, in order. */
const FLOW: Stage[] = ['TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'COMPLETE'];

/** mulberry32: a small, fast, seeded PRNG; the same seed gives the same history. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

interface Team {
  uid: string;
  members: string[];
  /** Live agent identities: the team's workers. */
  agents: Identity[];
}
interface Factory {
  uid: string;
  team: Team;
  /** Its newest live foreman, which dispatched runs go to. */
  foreman: Identity | null;
  deleted: boolean;
}
interface Identity {
  uid: string;
  team: Team;
  factory: Factory | null;
  keyHashes: string[];
  /** The id its worker announces itself with. */
  worker: string;
  deleted: boolean;
}
interface Run {
  id: string;
  conversation: string;
  team: Team;
  creator: string;
  agent: Identity | null;
  depth: number;
  root: string;
  mode: RunMode;
  state: RunState;
}
interface RunOptions {
  creator: RunCreatedData['creator'];
  agent?: Identity | null;
  /** The factory of a dispatch; other runs take their agent's factory, as createRun does. */
  dispatchTo?: Factory;
  conversation?: string;
  parent?: Run;
  mode?: RunMode;
  source?: RunSource;
  /** A dispatch's ticket; without one the run gets an adhoc reference of its own, as dispatchRun does. */
  ticket?: string | null;
}
/** How an execution ends: finished by its worker, or cancelled by a user. */
type RunEnd = FinishState | 'CANCELLED';
type Step = () => Generator<HistoryRow>;

export interface HistoryInfo {
  kind: HistoryKind;
  events: number;
  teamUid: string;
  adminUid: string;
  /** two-teams: the second team, and the factory of each team (the admin's first). */
  smallTeamUid?: string;
  factoryUids?: string[];
}

/** Runs and tasks under way at once in `mixed`. */
const LIVES = 300;
/** The share of `mixed` steps that advance runs and tasks. */
const RUN_SHARE = 0.7;
/** Factories of `tasks-runs`. */
const HTTP_FACTORIES = 5;

/**
 * Yields `size` events (mixed), the events of `size` factories (one-team), or of `size` runs and
 * `tasks` tasks (tasks-runs).
 */
export function* generateHistory(
  kind: HistoryKind,
  size: number,
  info: Partial<HistoryInfo> = {},
  tasks = 0,
): Generator<HistoryRow> {
  const rand = prng(kind === 'mixed' ? 0x5eed : kind === 'one-team' ? 0xfac7 : 0x7a5c);
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const weighted = <T>(choices: ReadonlyArray<readonly [T, number]>): T => {
    let r = rand() * choices.reduce((sum, [, w]) => sum + w, 0);
    for (const [choice, w] of choices) if ((r -= w) < 0) return choice;
    return choices.at(-1)![0];
  };
  const hex = (n: number) => {
    let s = '';
    while (s.length < n)
      s += Math.floor(rand() * 0x100000000)
        .toString(16)
        .padStart(8, '0');
    return s.slice(0, n);
  };

  let clock = Date.parse('2025-01-06T08:00:00.000Z');
  /** A UUIDv7 of the history's clock, as Shopfloor mints them (src/ids.ts). */
  const uuid = () => {
    const t = clock.toString(16).padStart(12, '0');
    const h = hex(20);
    return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${h.slice(0, 3)}-a${h.slice(3, 6)}-${h.slice(6, 18)}`;
  };
  const revisions = new Map<string, number>();
  let count = 0;
  let actor: EventMetadata['actor'] = { type: 'system', uid: 'bootstrap' };
  let teamUid: string | null = null;
  /** Set while a reaction's events are written: the reactor and its cause, as the server records them. */
  let reacting: { causation_id: string; reaction: NonNullable<EventMetadata['reaction']> } | null = null;

  /** One event; the type parameter ties the literal to an event type of commands/. */
  const row = <E extends NewEvent>(stream: string, event: E): HistoryRow => {
    const revision = (revisions.get(stream) ?? -1) + 1;
    revisions.set(stream, revision);
    clock += 1 + int(600);
    count += 1;
    const request = uuid();
    const metadata: EventMetadata = {
      actor,
      team_uid: teamUid,
      correlation_id: request,
      causation_id: reacting?.causation_id ?? null,
      request_id: reacting ? null : request,
      occurred_at: new Date(clock).toISOString(),
      ...(reacting ? { reaction: reacting.reaction } : {}),
    };
    return {
      id: uuid(),
      stream,
      revision,
      type: event.type,
      data: JSON.stringify(event.data),
      metadata: JSON.stringify(metadata),
    };
  };

  const asUser = (team: Team, uid = pick(team.members)) => {
    actor = { type: 'user', uid };
    teamUid = team.uid;
    return uid;
  };
  const asAgent = (agent: Identity) => {
    actor = { type: 'agent', uid: agent.uid };
    teamUid = agent.team.uid;
  };
  /** The reactors and the worker sweeper act as the system, in the team of what they react to. */
  const asSystem = (uid: string, team: Team) => {
    actor = { type: 'system', uid };
    teamUid = team.uid;
  };

  function* newUser(email: string, displayName: string): Generator<HistoryRow, string> {
    const uid = uuid();
    yield row<EmailReserved>(`email-${sha256(email)}`, { type: 'EmailReserved', data: { email, user_uid: uid } });
    yield row<UserEvent>(`user-${uid}`, { type: 'UserRegistered', data: { uid, email, display_name: displayName } });
    const keyHash = displayName === 'admin' ? sha256(BENCH_ADMIN_KEY) : hex(64);
    yield row<UserEvent>(`user-${uid}`, {
      type: 'ApiKeyIssued',
      data: { key_id: uuid(), key_hash: keyHash, principal: { type: 'user', uid } },
    });
    return uid;
  }

  function* newTeam(name: string, adminUid: string): Generator<HistoryRow, Team> {
    const uid = uuid();
    yield row<TeamEvent>(`team-${uid}`, { type: 'TeamCreated', data: { uid, name } });
    yield row<TeamEvent>(`team-${uid}`, {
      type: 'MemberAdded',
      data: { team_uid: uid, user_uid: adminUid, role: 'admin' },
    });
    return { uid, members: [adminUid], agents: [] };
  }

  // The prologue of every install: commands/team/bootstrap.ts, with the bench key.
  const team0Uid = uuid();
  const adminUid = uuid();
  teamUid = team0Uid;
  yield row(`bootstrap`, { type: 'BootstrapClaimed', data: { team_uid: team0Uid, user_uid: adminUid } });
  const email = 'admin@example.com';
  yield row<EmailReserved>(`email-${sha256(email)}`, { type: 'EmailReserved', data: { email, user_uid: adminUid } });
  yield row<UserEvent>(`user-${adminUid}`, {
    type: 'UserRegistered',
    data: { uid: adminUid, email, display_name: 'admin' },
  });
  yield row<UserEvent>(`user-${adminUid}`, {
    type: 'ApiKeyIssued',
    data: { key_id: uuid(), key_hash: sha256(BENCH_ADMIN_KEY), principal: { type: 'user', uid: adminUid } },
  });
  yield row<TeamEvent>(`team-${team0Uid}`, { type: 'TeamCreated', data: { uid: team0Uid, name: 'Default team' } });
  yield row<TeamEvent>(`team-${team0Uid}`, {
    type: 'MemberAdded',
    data: { team_uid: team0Uid, user_uid: adminUid, role: 'admin' },
  });
  const team0: Team = { uid: team0Uid, members: [adminUid], agents: [] };
  Object.assign(info, { kind, teamUid: team0Uid, adminUid });

  const teams: Team[] = [team0];
  const factories: Factory[] = [];
  const identities: Identity[] = [];
  let serial = 0;

  const fields = () => {
    serial += 1;
    const city = pick(CITIES);
    return {
      name: `${city} ${pick(KINDS)} ${serial}`,
      alias: rand() < 0.7 ? `${city.slice(0, 3).toUpperCase()}-${serial}` : null,
      description: rand() < 0.5 ? `Line ${serial} of the ${city} plant, shift ${1 + int(3)}` : null,
      repositories: Array.from({ length: int(3) }, () => ({ owner: 'acme', repo: `svc-${hex(6)}` })),
    };
  };
  function* createFactory(team: Team): Generator<HistoryRow, Factory> {
    asUser(team);
    const uid = uuid();
    yield row<FactoryEvent>(`factory-${uid}`, {
      type: 'FactoryCreated',
      data: { uid, team_uid: team.uid, ...fields() },
    });
    const factory: Factory = { uid, team, foreman: null, deleted: false };
    factories.push(factory);
    return factory;
  }
  /** Half the updates go to the 2,000 newest factories: recent work is hot. */
  const someFactory = (): number =>
    rand() < 0.5 ? Math.max(0, factories.length - 1 - int(2000)) : int(factories.length);
  function* updateFactory(): Generator<HistoryRow> {
    const f = factories[someFactory()]!;
    asUser(f.team);
    const all = fields();
    const changes =
      rand() < 0.5
        ? { description: all.description ?? 'updated' }
        : rand() < 0.5
          ? { name: all.name }
          : { repositories: all.repositories };
    yield row<FactoryEvent>(`factory-${f.uid}`, { type: 'FactoryUpdated', data: { uid: f.uid, changes } });
  }
  function* createIdentity(team: Team, agentType: AgentType, factory: Factory | null): Generator<HistoryRow> {
    asUser(team);
    const uid = uuid();
    const profile = {
      name: `${agentType.toLowerCase()} ${serial++}`,
      agent_type: agentType,
      factory_uid: factory?.uid ?? null,
    };
    yield row<IdentityEvent>(`identity-${uid}`, {
      type: 'AgentIdentityCreated',
      data: { uid, team_uid: team.uid, profile },
    });
    const keyHash = hex(64);
    yield row<IdentityEvent>(`identity-${uid}`, {
      type: 'ApiKeyIssued',
      data: { key_id: uuid(), key_hash: keyHash, principal: { type: 'agent', uid } },
    });
    const identity: Identity = {
      uid,
      team,
      factory,
      keyHashes: [keyHash],
      worker: `worker-${hex(12)}`,
      deleted: false,
    };
    identities.push(identity);
    team.agents.push(identity);
    if (agentType === 'FOREMAN' && factory) factory.foreman = identity;
  }

  // ---- runs and tasks ------------------------------------------------------------------------

  /**
   * Runs and tasks under way; each run step of `mixed` advances one of them by one event. Each
   * keeps its own actor across its events, whatever the steps in between act as.
   */
  const lives: Array<{ steps: Generator<HistoryRow>; actor: EventMetadata['actor']; teamUid: string | null }> = [];
  const begin = (steps: Generator<HistoryRow>) => lives.push({ steps, actor, teamUid }) - 1;
  /** Set by a life whose next event follows at once (the same request, or a reaction to it): the next step is its own. */
  let atOnce = false;

  const title = () => `${pick(VERBS)} ${pick(OBJECTS)}`;
  const text = (s: string) => [{ type: 'text', text: s }];

  /** POST /agent/runs (or a dispatch): RunCreated, then the run joins its conversation. */
  function* newRun(
    team: Team,
    o: RunOptions,
  ): Generator<HistoryRow, { run: Run; data: RunCreatedData; createdId: string; createdAt: number }> {
    const run_id = uuid();
    const conversation_id = o.conversation ?? uuid();
    const agent = o.agent ?? null;
    const runTitle = title();
    const config =
      rand() < 0.5
        ? { model_id: pick(MODELS), ...(rand() < 0.3 ? { name: pick(['reviewer', 'fixer', 'planner']) } : {}) }
        : null;
    const data: RunCreatedData = {
      run_id,
      conversation_id,
      title: runTitle,
      prompt: `${runTitle}. Keep the change small, add a test, and open a pull request against main.`,
      skill_spec: rand() < 0.15 ? `acme/skills:${pick(['triage', 'spec', 'implement', 'review'])}` : null,
      config,
      mode: o.mode ?? 'normal',
      interactive: false,
      metadata: o.dispatchTo ? { ticket_source: o.ticket ? 'linear' : 'adhoc', ticket_id: o.ticket ?? run_id } : {},
      team_uid: team.uid,
      executing_team_uid: team.uid,
      creator: o.creator,
      agent_identity_uid: agent?.uid ?? null,
      parent_run_id: o.parent?.id ?? null,
      root_run_id: o.parent?.root ?? run_id,
      depth: o.parent ? o.parent.depth + 1 : 0,
      factory_uid: o.dispatchTo?.uid ?? agent?.factory?.uid ?? null,
      ...(o.dispatchTo ? { factory_dispatch: true } : {}),
      source: o.source ?? 'API',
      execution_location: 'REMOTE',
      environment_id: rand() < 0.3 ? hex(22) : null,
      schedule_id: null,
      attachments: [],
    };
    const created = row<RunEvent>(`run-${run_id}`, { type: 'RunCreated', data });
    // Rows are written in the order they are made, from position 1: this is the event's position.
    const createdAt = count;
    atOnce = true;
    yield created;
    const creator_uid = o.creator.uid;
    atOnce = Boolean(o.dispatchTo); // the dispatched-task reactor
    yield row<ConversationEvent>(`conversation-${conversation_id}`, {
      type: 'ConversationRunAdded',
      data: { conversation_id, run_id, team_uid: team.uid, creator_uid },
    });
    const run: Run = {
      id: run_id,
      conversation: conversation_id,
      team,
      creator: creator_uid,
      agent,
      depth: data.depth,
      root: data.root_run_id,
      mode: data.mode,
      state: 'QUEUED',
    };
    return { run, data, createdId: created.id, createdAt };
  }

  const finishState = (): FinishState =>
    weighted([
      ['SUCCEEDED', 75],
      ['FAILED', 12],
      ['ERROR', 5],
      ['BLOCKED', 8],
    ] as const);

  /**
   * Executions of a queued run until it ends as `end`: by a worker of its team (its own agent
   * when live), which leases, claims and starts it, then reports. `rich` adds what workers report
   * besides (timeline, messages, usage, artifacts, sub-runs) and the odd expired lease or
   * follow-up. A run whose team has no worker stays queued; a run whose worker's identity is
   * deleted while it holds it is taken back by the sweeper.
   */
  function* execute(run: Run, end: RunEnd, rich: boolean): Generator<HistoryRow> {
    const run_id = run.id;
    const stream = `run-${run_id}`;
    const user = () => asUser(run.team, run.creator);
    const cancel: Step = function* () {
      user();
      run.state = 'CANCELLED';
      atOnce = true; // a task is cancelled with its run
      yield row<RunEvent>(stream, { type: 'RunCancelled', data: { run_id, reason: 'cancelled through the API' } });
    };
    execution: for (;;) {
      if (rich && rand() < 0.03) {
        user();
        yield row<RunEvent>(stream, {
          type: 'RunPromptExtended',
          data: { run_id, message: 'Also update the changelog.', mode: null },
        });
      }
      if (end === 'CANCELLED' && (!rich || rand() < 0.4)) {
        yield* cancel();
        return;
      }
      const w = run.agent && !run.agent.deleted ? run.agent : run.team.agents.length ? pick(run.team.agents) : null;
      if (!w) return;
      const held = { run_id, worker_id: w.worker, execution_id: uuid() };
      asAgent(w);
      run.state = 'PENDING';
      yield row<RunEvent>(stream, {
        type: 'RunLeased',
        data: { ...held, lease_expires_at: new Date(clock + 30_000).toISOString() },
      });
      if (rich && rand() < 0.03) {
        asSystem('worker-sweeper', run.team);
        run.state = 'QUEUED';
        yield row<RunEvent>(stream, { type: 'RunLeaseExpired', data: { run_id, worker_id: w.worker } });
        continue;
      }
      /** One report of the worker, moving the run to `state` if given. */
      const report = (event: RunEvent, state?: RunState): Step =>
        function* () {
          asAgent(w);
          if (state) run.state = state;
          yield row<RunEvent>(stream, event);
        };
      const steps: Step[] = [report({ type: 'RunClaimed', data: held }, 'CLAIMED')];
      if (rich)
        steps.push(
          report({
            type: 'RunTimelineRecorded',
            data: { run_id, name: 'worker_container_ready', detail: { host: w.worker, image: 'acme/agent:2025.1' } },
          }),
        );
      steps.push(report({ type: 'RunStarted', data: { run_id, execution_id: held.execution_id } }, 'INPROGRESS'));
      if (rich) steps.push(...richReports(run, w, held.execution_id, report));
      if (end === 'CANCELLED') {
        steps.push(cancel);
      } else {
        const status_message = end === 'SUCCEEDED' ? null : STATUS[end];
        steps.push(
          report(
            { type: 'RunFinished', data: { run_id, execution_id: held.execution_id, state: end, status_message } },
            end,
          ),
        );
      }
      for (const step of steps) {
        if (w.deleted) {
          // Its key is revoked, so it stops heartbeating: the sweeper takes the run back.
          const requeued = (run.state as RunState) !== 'INPROGRESS'; // the steps move it on, unseen by tsc's narrowing
          asSystem('worker-sweeper', run.team);
          run.state = requeued ? 'QUEUED' : 'ERROR';
          yield row<RunEvent>(stream, { type: 'RunWorkerLost', data: { run_id, worker_id: w.worker, requeued } });
          if (requeued) continue execution;
          return;
        }
        yield* step();
      }
      return;
    }
  }

  /** What a worker reports while the run is in progress, as steps of `execute`. */
  function richReports(run: Run, w: Identity, execution_id: string, report: (event: RunEvent) => Step): Step[] {
    const run_id = run.id;
    const message = (role: string, content: unknown[], step_id: string | null): Step =>
      report({
        type: 'RunMessageRecorded',
        data: {
          run_id,
          conversation_id: run.conversation,
          message_id: uuid(),
          step_id,
          parent_step_id: null,
          role,
          content,
        },
      });
    const steps: Step[] = [
      report({
        type: 'RunTimelineRecorded',
        data: { run_id, name: 'repository_cloned', detail: { repository: `acme/svc-${hex(6)}` } },
      }),
    ];
    for (let i = 1 + int(3); i > 0; i--) {
      const step = uuid();
      const action = `call_${hex(8)}`;
      if (rand() < 0.5)
        steps.push(
          message('assistant', text(`Looking at ${pick(OBJECTS)}: the failure comes from a missing null check.`), step),
        );
      steps.push(
        message(
          'assistant',
          [{ type: 'action', id: action, category: 'command', name: 'run_command', input: { command: 'npm test' } }],
          step,
        ),
        message(
          'tool',
          [
            {
              type: 'action_result',
              action_id: action,
              category: 'command',
              name: 'run_command',
              state: 'completed',
              output: { exit_code: int(2) },
            },
          ],
          step,
        ),
      );
    }
    if (rand() < 0.05) {
      steps.splice(2, 0, function* () {
        asUser(run.team, run.creator);
        const data = {
          run_id,
          execution_id,
          message: 'Please keep the public API unchanged.',
          mode: null,
          attachments: [],
          to: 'execution' as const,
        };
        yield row<RunEvent>(`run-${run_id}`, { type: 'RunFollowupDelivered', data });
      });
    }
    // An orchestrating run hands parts of its work to sub-runs, which it creates as its agent.
    if (run.mode === 'orchestrate' && run.depth < 2) {
      for (let i = 1 + int(3); i > 0; i--) {
        steps.push(function* () {
          asAgent(w);
          const { run: child } = yield* newRun(run.team, {
            creator: { type: 'service_account', uid: w.uid },
            parent: run,
          });
          begin(runTurns(child));
        });
      }
    }
    const tokens = 2_000 + int(200_000);
    steps.push(
      report({
        type: 'RunUsageReported',
        data: {
          run_id,
          usage: {
            inference_cost_usd: tokens / 250_000,
            compute_cost_usd: 0.01 * (1 + int(20)),
            total_tokens: tokens,
            model_token_usage: [{ model_id: pick(MODELS), usage_type: 'warp', total_tokens: tokens }],
          },
        },
      }),
    );
    const artifacts = weighted([
      [0, 40],
      [1, 45],
      [2, 15],
    ] as const);
    for (let i = 0; i < artifacts; i++)
      steps.push(report({ type: 'RunArtifactAdded', data: { run_id, artifact: artifact() } }));
    return steps;
  }

  function artifact(): Artifact {
    const artifact_uid = uuid();
    switch (
      weighted([
        ['PULL_REQUEST', 60],
        ['PLAN', 25],
        ['EXTERNAL_REFERENCE', 15],
      ] as const)
    ) {
      case 'PULL_REQUEST':
        return {
          artifact_uid,
          artifact_type: 'PULL_REQUEST',
          public: false,
          url: `https://github.com/acme/svc-${hex(6)}/pull/${1 + int(5000)}`,
          branch: `agent/${hex(8)}`,
          title: title(),
        };
      case 'PLAN':
        return {
          artifact_uid,
          artifact_type: 'PLAN',
          public: false,
          document_uid: artifact_uid,
          title: `Plan: ${title()}`,
          content: '1. Reproduce\n2. Fix\n3. Add a regression test',
        };
      case 'EXTERNAL_REFERENCE':
        return {
          artifact_uid,
          artifact_type: 'EXTERNAL_REFERENCE',
          public: false,
          reference_type: 'linear_issue',
          url: `https://linear.app/acme/issue/PAY-${1 + int(9000)}`,
          title: title(),
        };
    }
  }

  /** A run of the API from creation to its end; one in ten is followed up after it ends (a new execution). */
  function* runTurns(run: Run): Generator<HistoryRow> {
    for (;;) {
      yield* execute(run, rand() < 0.06 ? 'CANCELLED' : finishState(), true);
      if (run.state === 'QUEUED' || run.state === 'CANCELLED' || rand() >= 0.1) return;
      asUser(run.team, run.creator);
      run.state = 'QUEUED';
      yield row<RunEvent>(`run-${run.id}`, {
        type: 'RunResumed',
        data: {
          run_id: run.id,
          message: 'The build still fails on CI, have another look.',
          mode: null,
          attachments: [],
        },
      });
    }
  }

  function* apiRun(team: Team): Generator<HistoryRow> {
    const creator = pick(team.members);
    asUser(team, creator);
    const { run } = yield* newRun(team, {
      creator: { type: 'user', uid: creator },
      agent: rand() < 0.4 ? pick(team.agents) : null,
      mode: weighted([
        ['normal', 80],
        ['plan', 10],
        ['orchestrate', 10],
      ] as const),
      source: rand() < 0.6 ? 'API' : pick(OTHER_SOURCES),
    });
    yield* runTurns(run);
  }

  /**
   * A run dispatched to the factory's foreman (POST /factory/{uid}/runs), whose task the
   * dispatched-task reactor creates (with the uid it derives, so that a server replaying the
   * history finds it); then the task moves through its stages, a new run of the conversation per
   * stage, until it completes, stalls, fails, is cancelled or deleted, or its factory is deleted.
   */
  function* factoryTask(f: Factory): Generator<HistoryRow> {
    const team = f.team;
    const creator = asUser(team);
    const dispatched = yield* newRun(team, {
      creator: { type: 'user', uid: creator },
      agent: f.foreman,
      dispatchTo: f,
      ticket: rand() < 0.6 ? `PAY-${1 + int(9000)}` : null,
    });
    const { run: seed, data: seedData } = dispatched;
    const conversation_id = seed.conversation;
    if (f.deleted) {
      // The reactor finds no factory, so the run has no task.
      yield* execute(seed, finishState(), true);
      return;
    }
    const uid = derivedId({ id: dispatched.createdId }, 'factory-task');
    asSystem('reactor', team);
    const at = String(dispatched.createdAt);
    reacting = {
      causation_id: dispatched.createdId,
      reaction: { reactor: dispatchedTaskReactor.name, commit: at, prepare: at },
    };
    atOnce = true;
    yield row<ConversationEvent>(`conversation-${conversation_id}`, {
      type: 'ConversationTaskBound',
      data: { conversation_id, task_uid: uid, factory_uid: f.uid },
    });
    const taskCreated = row<TaskEvent>(`task-${uid}`, {
      type: 'TaskCreated',
      data: {
        uid,
        factory_uid: f.uid,
        team_uid: team.uid,
        conversation_id,
        run_id: seed.id,
        title: seedData.title,
        description: null,
        stage: 'TRIAGE',
        author: seedData.creator,
        ticket_id: seedData.metadata.ticket_id ?? null,
        ticket_source: seedData.metadata.ticket_source ?? null,
      },
    });
    reacting = null;
    yield taskCreated;
    const stream = `task-${uid}`;
    let run = seed;
    for (let stage = 0; ; stage++) {
      yield* execute(run, rand() < 0.05 ? 'CANCELLED' : finishState(), true);
      if (f.deleted) return; // its tasks cannot be changed any more
      asUser(team);
      if (run.state === 'CANCELLED') {
        yield row<TaskEvent>(stream, { type: 'TaskCancelled', data: { uid, from: FLOW[stage]!, run_id: run.id } });
        return;
      }
      if (rand() < 0.02) {
        atOnce = true;
        yield row<TaskEvent>(stream, { type: 'TaskDeleted', data: { uid, conversation_id } });
        yield row<ConversationEvent>(`conversation-${conversation_id}`, {
          type: 'ConversationTaskReleased',
          data: { conversation_id, task_uid: uid },
        });
        return;
      }
      if (run.state !== 'SUCCEEDED' || rand() < 0.12) return; // left at this stage
      if (rand() < 0.1) {
        atOnce = true; // the same PATCH as the stage
        yield row<TaskEvent>(stream, {
          type: 'TaskUpdated',
          data: { uid, changes: { description: `Seen in production again during ${FLOW[stage]}` } },
        });
      }
      yield row<TaskEvent>(stream, {
        type: 'TaskStageChanged',
        data: { uid, from: FLOW[stage]!, to: FLOW[stage + 1]! },
      });
      if (FLOW[stage + 1] === 'COMPLETE') return;
      // The next stage's run continues the conversation (POST /agent/runs with its conversation_id).
      const next = yield* newRun(team, {
        creator: { type: 'user', uid: asUser(team) },
        agent: f.foreman,
        conversation: conversation_id,
        mode: FLOW[stage + 1] === 'SPEC' ? 'plan' : 'normal',
      });
      run = next.run;
    }
  }

  function newLife(): Generator<HistoryRow> | null {
    if (rand() < 0.45) {
      const a = identities.length ? pick(identities) : null;
      const f = a?.factory;
      return f && f.foreman === a && !f.deleted ? factoryTask(f) : null;
    }
    const team = factories[someFactory()]!.team;
    return team.agents.length ? apiRun(team) : null;
  }

  if (kind === 'one-team') {
    for (let i = 0; i < size; i++) {
      yield* createFactory(team0);
      if (rand() < 0.2) yield* updateFactory();
    }
    Object.assign(info, { events: count });
    return;
  }

  if (kind === 'two-teams') {
    const small = yield* newTeam('Small team', adminUid);
    teams.push(small);
    const sides = [
      { team: team0, runs: size, factory: yield* createFactory(team0) },
      { team: small, runs: tasks, factory: yield* createFactory(small) },
    ];
    for (const side of sides) yield* createIdentity(side.team, 'FOREMAN', side.factory);
    const ends = [
      ['QUEUED', 5],
      ['SUCCEEDED', 62],
      ['FAILED', 12],
      ['ERROR', 5],
      ['BLOCKED', 6],
      ['CANCELLED', 10],
    ] as const;
    const creator = { type: 'user', uid: adminUid } as const;
    const left = sides.map((s) => s.runs);
    while (left[0]! + left[1]! > 0) {
      // The small team's runs spread evenly among the large one's.
      const i = rand() * (left[0]! + left[1]!) < left[0]! ? 0 : 1;
      left[i]! -= 1;
      const { team, factory } = sides[i]!;
      const end = weighted(ends);
      const withTask = rand() < 1 / 3;
      asUser(team, adminUid);
      const { run } = yield* newRun(team, { creator, agent: withTask ? factory.foreman : null });
      if (withTask) {
        const uid = uuid();
        const conversation_id = run.conversation;
        yield row<ConversationEvent>(`conversation-${conversation_id}`, {
          type: 'ConversationTaskBound',
          data: { conversation_id, task_uid: uid, factory_uid: factory.uid },
        });
        yield row<TaskEvent>(`task-${uid}`, {
          type: 'TaskCreated',
          data: {
            uid,
            factory_uid: factory.uid,
            team_uid: team.uid,
            conversation_id,
            run_id: run.id,
            title: title(),
            description: null,
            stage: pick(['TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'COMPLETE'] as const),
            author: creator,
            ticket_id: null,
            ticket_source: null,
          },
        });
      }
      if (end !== 'QUEUED') yield* execute(run, end, false);
    }
    Object.assign(info, { events: count, smallTeamUid: small.uid, factoryUids: sides.map((s) => s.factory.uid) });
    return;
  }

  if (kind === 'tasks-runs') {
    for (let i = 0; i < HTTP_FACTORIES; i++) {
      const f = yield* createFactory(team0);
      yield* createIdentity(team0, 'FOREMAN', f);
    }
    const ends = [
      ['QUEUED', 5],
      ['SUCCEEDED', 62],
      ['FAILED', 12],
      ['ERROR', 5],
      ['BLOCKED', 6],
      ['CANCELLED', 10],
    ] as const;
    const creator = { type: 'user', uid: adminUid } as const;
    let tasksLeft = tasks;
    for (let i = 0; i < size; i++) {
      // Exactly `tasks` of the runs get a task, spread evenly over the history.
      const withTask = rand() * (size - i) < tasksLeft;
      const f = factories[int(factories.length)]!;
      const end = weighted(ends);
      asUser(team0, adminUid);
      const { run } = yield* newRun(team0, { creator, agent: withTask ? f.foreman : null });
      if (withTask) {
        // POST /factory/{uid}/tasks on the run's conversation.
        tasksLeft -= 1;
        const uid = uuid();
        const conversation_id = run.conversation;
        yield row<ConversationEvent>(`conversation-${conversation_id}`, {
          type: 'ConversationTaskBound',
          data: { conversation_id, task_uid: uid, factory_uid: f.uid },
        });
        yield row<TaskEvent>(`task-${uid}`, {
          type: 'TaskCreated',
          data: {
            uid,
            factory_uid: f.uid,
            team_uid: team0.uid,
            conversation_id,
            run_id: run.id,
            title: title(),
            description: null,
            stage: 'TRIAGE',
            author: creator,
            ticket_id: null,
            ticket_source: null,
          },
        });
        if (end !== 'QUEUED') yield* execute(run, end, false);
        asUser(team0, adminUid);
        if (end === 'CANCELLED') {
          yield row<TaskEvent>(`task-${uid}`, { type: 'TaskCancelled', data: { uid, from: 'TRIAGE', run_id: run.id } });
          continue;
        }
        const stage =
          end === 'SUCCEEDED'
            ? weighted([
                ['SPEC', 20],
                ['IMPLEMENT', 35],
                ['REVIEW', 15],
                ['COMPLETE', 30],
              ] as const)
            : rand() < 0.6
              ? 'TRIAGE'
              : pick(['SPEC', 'IMPLEMENT', 'REVIEW'] as const);
        if (stage !== 'TRIAGE')
          yield row<TaskEvent>(`task-${uid}`, { type: 'TaskStageChanged', data: { uid, from: 'TRIAGE', to: stage } });
      } else if (end !== 'QUEUED') {
        yield* execute(run, end, false);
      }
    }
    Object.assign(info, { events: count });
    return;
  }

  let last = 0;
  while (count < size) {
    if (atOnce || rand() < RUN_SHARE) {
      // Start a run or task while fewer than LIVES are under way, else advance one of them. Tasks
      // go to the factory of a foreman; other runs to a team with workers.
      const life = !atOnce && lives.length < LIVES && factories.length ? newLife() : null;
      const i = atOnce ? last : life ? begin(life) : int(lives.length);
      atOnce = false;
      if (lives.length) {
        const current = lives[i]!;
        ({ actor, teamUid } = current);
        const next = current.steps.next();
        Object.assign(current, { actor, teamUid });
        last = i;
        if (next.done) {
          atOnce = false;
          lives[i] = lives[lives.length - 1]!;
          lives.pop();
        } else {
          yield next.value;
        }
        continue;
      }
    }
    const r = rand() * 100;
    if (r < 0.2 || teams.length < 5) {
      const admin = yield* newUser(`owner${serial++}@example.org`, 'owner');
      actor = { type: 'user', uid: admin };
      teams.push(yield* newTeam(`Team ${teams.length}`, admin));
    } else if (r < 1.2) {
      const team = pick(teams);
      asUser(team);
      const uid = yield* newUser(`member${serial++}@example.org`, 'member');
      yield row<TeamEvent>(`team-${team.uid}`, {
        type: 'MemberAdded',
        data: { team_uid: team.uid, user_uid: uid, role: 'member' },
      });
      team.members.push(uid);
    } else if (r < 21.2 || factories.length === 0) {
      yield* createFactory(pick(teams));
    } else if (r < 76.2) {
      yield* updateFactory();
    } else if (r < 78.7) {
      const i = someFactory();
      const f = factories[i]!;
      asUser(f.team);
      yield row<FactoryEvent>(`factory-${f.uid}`, { type: 'FactoryDeleted', data: { uid: f.uid } });
      f.deleted = true;
      factories[i] = factories[factories.length - 1]!;
      factories.pop();
    } else if (r < 84.7 || identities.length === 0) {
      const f = factories[someFactory()]!;
      yield* createIdentity(f.team, rand() < 0.5 ? 'FOREMAN' : pick(AGENT_TYPES), rand() < 0.8 ? f : null);
    } else if (r < 98) {
      const a = pick(identities);
      asUser(a.team);
      yield row<IdentityEvent>(`identity-${a.uid}`, {
        type: 'AgentIdentityUpdated',
        data: { uid: a.uid, changes: { name: `agent ${serial++}` } },
      });
    } else if (r < 99) {
      const a = pick(identities);
      asUser(a.team);
      const keyHash = hex(64);
      yield row<IdentityEvent>(`identity-${a.uid}`, {
        type: 'ApiKeyIssued',
        data: { key_id: uuid(), key_hash: keyHash, principal: { type: 'agent', uid: a.uid } },
      });
      a.keyHashes.push(keyHash);
    } else {
      const i = int(identities.length);
      const a = identities[i]!;
      asUser(a.team);
      yield row<IdentityEvent>(`identity-${a.uid}`, {
        type: 'AgentIdentityDeleted',
        data: { uid: a.uid, revoked_key_hashes: a.keyHashes },
      });
      a.deleted = true;
      a.team.agents.splice(a.team.agents.indexOf(a), 1);
      if (a.factory?.foreman === a) a.factory.foreman = null;
      identities[i] = identities[identities.length - 1]!;
      identities.pop();
    }
  }
  Object.assign(info, { events: count });
}
