/**
 * The `analytics` history: one factory's year. `size` runs spread evenly over 2025, each created
 * by a person of the team (or, for sub-runs, by its parent's agent), leased, claimed and started
 * by a worker, reporting its usage (by model and category), some a pull request, and finishing;
 * a tenth continue an earlier run's conversation. The cost ledger's entries are made by the
 * ledger's own decider and pricing, exactly as the server's reactor records them, and the price
 * list changes in the middle of the year. A share of the pull requests has GitHub facts (opened by
 * the bot, reviewed, merged). The year ends with every run finished, so no reaction is left to do.
 */
import { createHash } from 'node:crypto';
import type { LedgerEvent, PullRequestFactsObserved } from '../../commands/analytics/events.js';
import { ledgerStream, pullRequestStream } from '../../commands/analytics/events.js';
import { observeGithub, pullRequestRef } from '../../commands/analytics/github.js';
import {
  type LedgerCommand,
  ledgerDecider,
  type LedgerState,
  type PriceList,
} from '../../commands/analytics/cost-ledger-decider.js';
import { loadCatalogue, SHIPPED_CATALOGUE } from '../../commands/model/catalogue-file.js';
import type { Catalogue, ModelEvent } from '../../commands/model/events.js';
import type { ConversationEvent } from '../../commands/conversation/events.js';
import type { FactoryEvent } from '../../commands/factory/events.js';
import type { IdentityEvent } from '../../commands/identity/events.js';
import type { RunCreatedData, RunEvent, RunSource } from '../../commands/run/events.js';
import type { TeamEvent } from '../../commands/team/events.js';
import type { EmailReserved, UserEvent } from '../../commands/user/events.js';
import type { EventMetadata, NewEvent } from '../../src/eventstore/port.js';
import { BENCH_ADMIN_KEY, type HistoryInfo, type HistoryRow } from './history.js';

const YEAR_START = Date.parse('2025-01-01T00:00:00.000Z');
const YEAR_MS = 365 * 24 * 3_600_000;
const MODELS: ReadonlyArray<readonly [string, number]> = [
  ['claude-4-6-sonnet', 60],
  ['gpt-5-4-high', 25],
  ['gemini-3-pro', 15],
];
const SOURCES: ReadonlyArray<readonly [RunSource, number]> = [
  ['API', 40],
  ['SLACK', 20],
  ['LINEAR', 20],
  ['SCHEDULED_AGENT', 10],
  ['GITHUB_WEBHOOK', 10],
];
const MEMBERS = 6;

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

/** The info of the analytics history: the factory, besides the usual. */
export interface AnalyticsInfo extends HistoryInfo {
  factoryUid: string;
  from: string;
  to: string;
}

export function* generateAnalyticsHistory(size: number, info: Partial<AnalyticsInfo>): Generator<HistoryRow> {
  const rand = prng(0xa11a);
  const int = (n: number) => Math.floor(rand() * n);
  const weighted = <T>(choices: ReadonlyArray<readonly [T, number]>): T => {
    let r = rand() * choices.reduce((sum, [, w]) => sum + w, 0);
    for (const [choice, w] of choices) if ((r -= w) < 0) return choice;
    return choices.at(-1)![0];
  };
  let clock = YEAR_START - 3_600_000;
  let serial = 0;
  const uuid = () => {
    const t = clock.toString(16).padStart(12, '0');
    const h = (serial++).toString(16).padStart(20, '0');
    return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${h.slice(0, 3)}-a${h.slice(3, 6)}-${h.slice(6, 18)}`;
  };
  const revisions = new Map<string, number>();
  let count = 0;
  let actor: EventMetadata['actor'] = { type: 'system', uid: 'bootstrap' };
  let teamUid: string | null = null;
  const row = <E extends NewEvent>(stream: string, event: E, at = clock): HistoryRow => {
    clock = Math.max(clock, at);
    const revision = (revisions.get(stream) ?? -1) + 1;
    revisions.set(stream, revision);
    count += 1;
    const request = uuid();
    const metadata: EventMetadata = {
      actor,
      team_uid: teamUid,
      correlation_id: request,
      causation_id: null,
      request_id: request,
      occurred_at: new Date(clock).toISOString(),
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

  // The prologue of every install (commands/team/bootstrap.ts), with the bench key.
  const team = uuid();
  const admin = uuid();
  teamUid = team;
  yield row('bootstrap', { type: 'BootstrapClaimed', data: { team_uid: team, user_uid: admin } });
  const email = 'admin@example.com';
  yield row<EmailReserved>(`email-${sha256(email)}`, { type: 'EmailReserved', data: { email, user_uid: admin } });
  yield row<UserEvent>(`user-${admin}`, { type: 'UserRegistered', data: { uid: admin, email, display_name: 'admin' } });
  yield row<UserEvent>(`user-${admin}`, {
    type: 'ApiKeyIssued',
    data: { key_id: uuid(), key_hash: sha256(BENCH_ADMIN_KEY), principal: { type: 'user', uid: admin } },
  });
  yield row<TeamEvent>(`team-${team}`, { type: 'TeamCreated', data: { uid: team, name: 'Default team' } });
  yield row<TeamEvent>(`team-${team}`, {
    type: 'MemberAdded',
    data: { team_uid: team, user_uid: admin, role: 'admin' },
  });
  const people = [admin];
  for (let i = 0; i < MEMBERS; i++) {
    const uid = uuid();
    const address = `member${i}@example.com`;
    actor = { type: 'user', uid: admin };
    yield row<EmailReserved>(`email-${sha256(address)}`, {
      type: 'EmailReserved',
      data: { email: address, user_uid: uid },
    });
    yield row<UserEvent>(`user-${uid}`, {
      type: 'UserRegistered',
      data: { uid, email: address, display_name: `Member ${i}` },
    });
    yield row<TeamEvent>(`team-${team}`, {
      type: 'MemberAdded',
      data: { team_uid: team, user_uid: uid, role: 'member' },
    });
    people.push(uid);
  }

  // The price list: a dearer one until mid-year, then the one Shopfloor ships (so a server started
  // on this history finds its MODELS_FILE in force and records nothing).
  const shipped = loadCatalogue(SHIPPED_CATALOGUE);
  const dearer: Catalogue = {
    ...shipped,
    models: shipped.models.map((m) => ({
      ...m,
      prices: { ...m.prices, input: m.prices.input * 1.5, output: m.prices.output * 1.5 },
    })),
  };
  actor = { type: 'system', uid: 'models-file' };
  yield row<ModelEvent>('models', { type: 'ModelCatalogueChanged', data: dearer });
  let priceList: PriceList = { revision: 0, catalogue: dearer };

  actor = { type: 'user', uid: admin };
  const factory = uuid();
  yield row<FactoryEvent>(`factory-${factory}`, {
    type: 'FactoryCreated',
    data: {
      uid: factory,
      team_uid: team,
      name: 'Analytics factory',
      alias: 'AN',
      description: null,
      repositories: [{ owner: 'acme', repo: 'app' }],
    },
  });
  const agent = uuid();
  yield row<IdentityEvent>(`identity-${agent}`, {
    type: 'AgentIdentityCreated',
    data: {
      uid: agent,
      team_uid: team,
      profile: { name: 'Implementer', agent_type: 'IMPLEMENT', factory_uid: factory },
    },
  });
  Object.assign(info, {
    kind: 'analytics',
    teamUid: team,
    adminUid: admin,
    factoryUid: factory,
    from: new Date(YEAR_START).toISOString(),
    to: new Date(YEAR_START + YEAR_MS).toISOString(),
  });

  const ledgers = new Map<string, LedgerState>();
  /** Records a ledger command as the reactor does: decided on the tree's state, by the system. */
  function* ledger(root: string, command: LedgerCommand, at: number): Generator<HistoryRow> {
    const state = ledgers.get(root) ?? ledgerDecider.initialState();
    const events = ledgerDecider.decide(command, state, {
      now: new Date(at).toISOString(),
      actor: { type: 'system', uid: 'reactor' },
      teams: {},
    });
    actor = { type: 'system', uid: 'reactor' };
    for (const e of events) yield row<LedgerEvent>(ledgerStream(root), e, at);
    ledgers.set(root, events.reduce(ledgerDecider.evolve, state));
  }

  interface Made {
    data: RunCreatedData;
    created_at: number;
    prs: string[];
  }
  const recent: Made[] = [];
  const byId = new Map<string, Made>();
  const rootOf = (m: Made) => byId.get(m.data.root_run_id) ?? m;
  /** The first run of each conversation: its inference is counted there. */
  const firstOf = new Map<string, Made>();
  const prUrls: string[] = [];
  const spacing = YEAR_MS / size;
  let prNumber = 0;

  for (let i = 0; i < size; i++) {
    const t0 = YEAR_START + i * spacing;
    if (priceList.revision === 0 && t0 >= YEAR_START + YEAR_MS / 2) {
      actor = { type: 'system', uid: 'models-file' };
      yield row<ModelEvent>('models', { type: 'ModelCatalogueChanged', data: shipped }, t0);
      priceList = { revision: 1, catalogue: shipped };
    }
    const parent = recent.length && rand() < 0.2 ? recent[recent.length - 1 - int(Math.min(3, recent.length))]! : null;
    const continued = !parent && recent.length && rand() < 0.1 ? recent[int(recent.length)]! : null;
    const run_id = uuid();
    const model_id = weighted(MODELS);
    const creator = parent
      ? ({ type: 'service_account', uid: agent } as const)
      : ({ type: 'user', uid: people[int(people.length)]! } as const);
    const conversation_id = continued?.data.conversation_id ?? run_id;
    const data: RunCreatedData = {
      run_id,
      conversation_id,
      title: `Run ${i}`,
      prompt: `Fix issue ${i} and open a pull request.`,
      skill_spec: null,
      config: { model_id },
      mode: 'normal',
      interactive: false,
      metadata: {},
      team_uid: team,
      executing_team_uid: team,
      creator,
      agent_identity_uid: agent,
      parent_run_id: parent?.data.run_id ?? null,
      root_run_id: parent?.data.root_run_id ?? run_id,
      depth: parent ? parent.data.depth + 1 : 0,
      factory_uid: factory,
      source: parent ? 'API' : weighted(SOURCES),
      execution_location: 'REMOTE',
      environment_id: null,
      schedule_id: null,
      attachments: [],
      resolved: { model_id, harness: 'oz', agent_type: 'IMPLEMENT' },
    };
    actor = creator.type === 'user' ? { type: 'user', uid: creator.uid } : { type: 'agent', uid: agent };
    const stream = `run-${run_id}`;
    yield row<RunEvent>(stream, { type: 'RunCreated', data }, t0);
    yield row<ConversationEvent>(`conversation-${conversation_id}`, {
      type: 'ConversationRunAdded',
      data: { conversation_id, run_id, team_uid: team, creator_uid: creator.uid },
    });
    const made: Made = { data, created_at: t0, prs: [] };
    byId.set(run_id, made);
    if (!firstOf.has(conversation_id)) firstOf.set(conversation_id, made);
    recent.push(made);
    if (recent.length > 50) recent.shift();
    const root = rootOf(made);

    const execution_id = uuid();
    actor = { type: 'agent', uid: agent };
    const claimedAt = t0 + 5_000;
    const startedAt = t0 + 10_000;
    yield row<RunEvent>(
      stream,
      {
        type: 'RunLeased',
        data: {
          run_id,
          worker_id: 'bench-worker',
          execution_id,
          lease_expires_at: new Date(t0 + 35_000).toISOString(),
        },
      },
      t0 + 2_000,
    );
    yield row<RunEvent>(
      stream,
      { type: 'RunClaimed', data: { run_id, worker_id: 'bench-worker', execution_id } },
      claimedAt,
    );
    yield row<RunEvent>(stream, { type: 'RunStarted', data: { run_id, execution_id } }, startedAt);
    const input = 20_000 + int(400_000);
    const usage = {
      total_tokens: 0,
      model_token_usage: [
        {
          model_id,
          usage_type: 'warp',
          total_tokens: Math.round(input * 1.6),
          tokens_by_category: {
            input,
            input_cache_read: Math.round(input * 0.4),
            input_cache_write: Math.round(input * 0.1),
            output: Math.round(input * 0.1),
          },
        },
      ],
    };
    usage.total_tokens = usage.model_token_usage[0]!.total_tokens;
    const usageAt = startedAt + 60_000 + int(60_000);
    const usageRevision = revisions.get(stream)! + 1;
    const usageRow = row<RunEvent>(stream, { type: 'RunUsageReported', data: { run_id, usage } }, usageAt);
    yield usageRow;
    const attributed = firstOf.get(conversation_id)!;
    const attributedRoot = attributed.data.root_run_id;
    // The cost keys of a run, as the reactor takes them: its tree root's source and creator, its own agent and model.
    const keysOf = (m: Made) => ({
      source: rootOf(m).data.source,
      user: rootOf(m).data.creator.uid,
      agent,
      model: m.data.resolved?.model_id ?? 'UNKNOWN',
    });
    yield* ledger(
      attributedRoot,
      {
        type: 'PriceUsage',
        data: {
          root_run_id: attributedRoot,
          run_id,
          attributed_run_id: attributed.data.run_id,
          factory_uid: factory,
          team_uid: team,
          keys: keysOf(attributed),
          cause: { event_id: usageRow.id, revision: usageRevision, at: new Date(usageAt).toISOString() },
          price_list: priceList,
          usage,
        },
      },
      usageAt + 5,
    );

    if (rand() < 0.35) {
      const sameTree = parent && root.prs.length && rand() < 0.3;
      const url = sameTree ? root.prs[0]! : `https://github.com/acme/app/pull/${++prNumber}`;
      const branch = `agent/run-${i}`;
      const artifactAt = usageAt + 10_000;
      actor = { type: 'agent', uid: agent };
      const artifactRevision = revisions.get(stream)! + 1;
      const artifactRow = row<RunEvent>(
        stream,
        {
          type: 'RunArtifactAdded',
          data: {
            run_id,
            artifact: { artifact_uid: uuid(), artifact_type: 'PULL_REQUEST', public: false, url, branch },
          },
        },
        artifactAt,
      );
      yield artifactRow;
      const ref = pullRequestRef(url)!;
      yield* ledger(
        data.root_run_id,
        {
          type: 'LinkPullRequest',
          data: {
            root_run_id: data.root_run_id,
            factory_uid: factory,
            team_uid: team,
            cause: { event_id: artifactRow.id, revision: artifactRevision, at: new Date(artifactAt).toISOString() },
            pr: { ...ref, branch },
            run: {
              run_id,
              root_run_id: data.root_run_id,
              created_at: new Date(t0).toISOString(),
              creator,
              source: root.data.source,
              requested_model_id: model_id,
            },
          },
        },
        artifactAt + 5,
      );
      root.prs.push(url);
      if (!sameTree) {
        prUrls.push(url);
        if (rand() < 0.75) {
          // GitHub tells of it: opened by the bot, reviewed, and (mostly) merged.
          const number = prNumber;
          const pr = (state: 'open' | 'closed', updated: number, merged: boolean) => ({
            html_url: url,
            number,
            title: `Fix issue ${i}`,
            user: { login: 'shopfloor[bot]', type: 'Bot' },
            state,
            draft: false,
            merged,
            created_at: new Date(artifactAt - 1_000).toISOString(),
            updated_at: new Date(updated).toISOString(),
            merged_at: merged ? new Date(updated).toISOString() : null,
            closed_at: state === 'closed' ? new Date(updated).toISOString() : null,
            additions: int(1500),
            deletions: int(300),
            changed_files: 1 + int(20),
            commits: 1 + int(5),
            head: { ref: branch, sha: uuid() },
          });
          const human = rand() < 0.6;
          const bodies: Array<[number, Record<string, unknown>]> = [
            [
              artifactAt + 1_000,
              {
                action: 'opened',
                pull_request: pr('open', artifactAt, false),
                repository: { full_name: 'acme/app' },
                sender: { login: 'shopfloor[bot]', type: 'Bot' },
              },
            ],
            [
              artifactAt + 20_000,
              {
                action: 'submitted',
                review: {
                  id: count,
                  state: human ? 'approved' : 'commented',
                  user: human ? { login: 'ada', type: 'User' } : { login: 'reviewer[bot]', type: 'Bot' },
                  submitted_at: new Date(artifactAt + 20_000).toISOString(),
                },
                pull_request: pr('open', artifactAt + 20_000, false),
                repository: { full_name: 'acme/app' },
                sender: { login: 'ada', type: 'User' },
              },
            ],
          ];
          if (rand() < 0.7)
            bodies.push([
              artifactAt + 40_000,
              {
                action: 'closed',
                pull_request: pr('closed', artifactAt + 40_000, true),
                repository: { full_name: 'acme/app' },
                sender: { login: 'ada', type: 'User' },
              },
            ]);
          actor = { type: 'system', uid: 'reactor' };
          for (const [at, body] of bodies) {
            const source_event_id = uuid();
            const observed = observeGithub(body, `delivery:${source_event_id}`, new Date(at).toISOString());
            if (observed?.kind !== 'pull_request') continue;
            const facts: PullRequestFactsObserved = {
              type: 'PullRequestFactsObserved',
              data: {
                ...observed.observation,
                pr_id: ref.pr_id,
                url: ref.url,
                provider: 'github',
                repo_full_name: 'acme/app',
                pr_number: number,
                factory_uid: factory,
                team_uid: team,
                webhook_uid: 'bench-webhook',
                delivery_id: source_event_id,
                source_event_id,
                received_at: new Date(at).toISOString(),
              },
            };
            yield row<PullRequestFactsObserved>(pullRequestStream(team, ref.pr_id), facts, at);
          }
        }
      }
    }

    const endedAt = startedAt + 100_000 + int(100_000);
    actor = { type: 'agent', uid: agent };
    const finishRevision = revisions.get(stream)! + 1;
    const finishRow = row<RunEvent>(
      stream,
      {
        type: 'RunFinished',
        data: { run_id, execution_id, state: rand() < 0.85 ? 'SUCCEEDED' : 'FAILED', status_message: null },
      },
      endedAt,
    );
    yield finishRow;
    yield* ledger(
      data.root_run_id,
      {
        type: 'PriceExecution',
        data: {
          root_run_id: data.root_run_id,
          run_id,
          factory_uid: factory,
          team_uid: team,
          keys: keysOf(made),
          cause: { event_id: finishRow.id, revision: finishRevision, at: new Date(endedAt).toISOString() },
          price_list: priceList,
          execution_id,
          runner_id: null,
          times: {
            claimed_at: new Date(claimedAt).toISOString(),
            started_at: new Date(startedAt).toISOString(),
            ended_at: new Date(endedAt).toISOString(),
          },
        },
      },
      endedAt + 5,
    );
  }
  Object.assign(info, { events: count, prs: prUrls.length });
}
