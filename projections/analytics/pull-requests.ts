/**
 * One document per team and pull request (`<team_uid>:<pr_id>`): from the first PULL_REQUEST
 * artifact of one of the team's factory runs that names it (the cost ledger's `PullRequestLinked`),
 * the code host's facts from the team's GitHub webhooks (`PullRequestFactsObserved`, which may come
 * first: the document then waits, unlisted, for a run to name it), its share of each producing
 * tree's cost, and the follow-ups people sent its runs. Idempotent: shares and counts are set,
 * interactions kept once per key.
 *
 * A URL is anyone's to report, so two teams naming one pull request each have their own document:
 * neither sees the other's runs, dollars or facts. Every event says its team (a ledger's, through
 * the table `trees`: each run tree's team, from its links), so a rebuild of a log written when
 * documents were keyed by `pr_id` alone gives each team its own.
 */
import type {
  InteractionKind,
  LedgerEvent,
  PrShare,
  PullRequestEvent,
  PullRequestFactsObserved,
  Usd,
} from '../../commands/analytics/events.js';
import { pullRequestKey } from '../../commands/analytics/events.js';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { type ProjectionDocs, projection } from '../../src/projector/projection.js';
import { own, putOwn } from '../../src/own-keys.js';
import { moveBuckets, type PrBucket, type PrSize, type RepoMergeBucket } from './pr-buckets.js';
import type { CostliestBucket } from './pr-costliest.js';

type PrState = 'open' | 'draft' | 'merged' | 'closed';

interface HumanInteractions {
  opened: number;
  code_push: number;
  review_approved: number;
  review_changes_requested: number;
  review_commented: number;
  comment: number;
  review_comment: number;
  pr_action: number;
  follow_up_message: number;
  total: number;
}

export interface PullRequestDoc {
  [field: string]: unknown;
  /** The pull request on its code host (the same in every team). */
  pr_id: string;
  url: string;
  provider: string;
  repo_full_name: string | null;
  /** Lower-cased `owner/repo`, for filters. */
  repo_key: string | null;
  pr_number: number | null;
  factory_uid: string | null;
  /** Whose record this is. */
  team_uid: string;
  /** A factory run named it: listed by `/pull-requests` and counted in the metrics. */
  listed: boolean;
  /** When a run first named it (its first PULL_REQUEST artifact). */
  first_seen_at: string | null;
  head_branch: string | null;
  runs: Array<{ run_id: string; root_run_id: string; created_at: string }>;
  /** The earliest linked run: its creation is the kickoff. */
  kickoff: {
    run_id: string;
    created_at: string;
    creator: { type: string; uid: string };
    source: string;
    requested_model_id: string | null;
  } | null;
  kickoff_at: string | null;
  title: string | null;
  author_login: string | null;
  state: PrState | null;
  opened_at: string | null;
  first_human_review_at: string | null;
  merged_at: string | null;
  closed_at: string | null;
  additions: number | null;
  deletions: number | null;
  changed_files: number | null;
  num_commits: number | null;
  /** The code host's `updated_at` of the newest snapshot of it applied (older ones arriving late are not). */
  snapshot_at: string | null;
  /** When anything last happened to it on the code host. */
  facts_at: string | null;
  /** Its opening was observed, so its whole history was. */
  history_complete: boolean;
  /** Each person's interaction once, by key (a review, a comment, a pushed head, a delivery). */
  interactions: Record<string, InteractionKind>;
  /** People's reviews: id → when submitted (the first starts the review stage). */
  reviews: Record<string, string | null>;
  /** Follow-ups people sent each producing run. */
  follow_ups: Record<string, number>;
  human_interactions: HumanInteractions;
  human_code_change: boolean;
  /** Its share of each producing tree's cost, by the tree's root run. */
  shares: Record<string, { usd: Usd; inference_by_model: Record<string, number> }>;
  cost: Usd & { total: number };
  /** Inference dollars by the model that served them. */
  models: Record<string, number>;
  size: PrSize | null;
  /** The sort key of the list, newest opened first: opened on the code host, else first seen. */
  opened_key: string;
  /** When the pull request last changed on the code host (else when first seen). */
  updated_at: string;
}

const round = (usd: number) => Math.round(usd * 1e9) / 1e9;

/** S under 100 changed lines (additions + deletions), M under 500, L under 1,000, XL from 1,000. */
export function sizeOf(additions: number | null, deletions: number | null): PrSize | null {
  if (additions === null || deletions === null) return null;
  const lines = additions + deletions;
  return lines < 100 ? 'S' : lines < 500 ? 'M' : lines < 1000 ? 'L' : 'XL';
}

const blank = (d: {
  pr_id: string;
  url: string;
  provider: string;
  repo_full_name: string | null;
  pr_number: number | null;
  factory_uid: string | null;
  team_uid: string;
}): PullRequestDoc => ({
  pr_id: d.pr_id,
  url: d.url,
  provider: d.provider,
  repo_full_name: d.repo_full_name,
  repo_key: d.repo_full_name?.toLowerCase() ?? null,
  pr_number: d.pr_number,
  factory_uid: d.factory_uid,
  team_uid: d.team_uid,
  listed: false,
  first_seen_at: null,
  head_branch: null,
  runs: [],
  kickoff: null,
  kickoff_at: null,
  title: null,
  author_login: null,
  state: null,
  opened_at: null,
  first_human_review_at: null,
  merged_at: null,
  closed_at: null,
  additions: null,
  deletions: null,
  changed_files: null,
  num_commits: null,
  snapshot_at: null,
  facts_at: null,
  history_complete: false,
  interactions: {},
  reviews: {},
  follow_ups: {},
  human_interactions: interactionsOf({}, {}),
  human_code_change: false,
  shares: {},
  cost: { inference: 0, compute: 0, platform: 0, total: 0 },
  models: {},
  size: null,
  opened_key: '',
  updated_at: '',
});

function interactionsOf(
  interactions: Record<string, InteractionKind>,
  followUps: Record<string, number>,
): HumanInteractions {
  const counts: HumanInteractions = {
    opened: 0,
    code_push: 0,
    review_approved: 0,
    review_changes_requested: 0,
    review_commented: 0,
    comment: 0,
    review_comment: 0,
    pr_action: 0,
    follow_up_message: 0,
    total: 0,
  };
  for (const kind of Object.values(interactions)) counts[kind] += 1;
  counts.follow_up_message = Object.values(followUps).reduce((s, n) => s + n, 0);
  counts.total = Object.entries(counts).reduce((s, [k, n]) => (k === 'total' ? s : s + n), 0);
  return counts;
}

const earliest = (times: ReadonlyArray<string | null>): string | null =>
  times.reduce<string | null>((min, t) => (t !== null && (min === null || t < min) ? t : min), null);

/** The fields that follow from the others. */
function derived(doc: PullRequestDoc): PullRequestDoc {
  const cost = { inference: 0, compute: 0, platform: 0 };
  const models: Record<string, number> = {};
  for (const share of Object.values(doc.shares)) {
    cost.inference += share.usd.inference;
    cost.compute += share.usd.compute;
    cost.platform += share.usd.platform;
    for (const [m, usd] of Object.entries(share.inference_by_model))
      putOwn(models, m, round((own(models, m) ?? 0) + usd));
  }
  const human_interactions = interactionsOf(doc.interactions, doc.follow_ups);
  return {
    ...doc,
    human_interactions,
    human_code_change: human_interactions.opened + human_interactions.code_push > 0,
    first_human_review_at: earliest(Object.values(doc.reviews)),
    cost: {
      inference: round(cost.inference),
      compute: round(cost.compute),
      platform: round(cost.platform),
      total: round(cost.inference + cost.compute + cost.platform),
    },
    models,
    size: sizeOf(doc.additions, doc.deletions),
    opened_key: doc.opened_at ?? doc.first_seen_at ?? '',
    updated_at: doc.facts_at ?? doc.first_seen_at ?? '',
  };
}

/** Each run tree's team, as its links recorded it. */
interface TreeDoc {
  [field: string]: unknown;
  team_uid: string;
}
type PrTables = { trees: TreeDoc; buckets: PrBucket; costliest: CostliestBucket; repo_merges: RepoMergeBucket };
type PrDocs = ProjectionDocs<PullRequestDoc, PrTables>;

/** Writes a pull request's document, and moves its figures in the buckets from `before`'s. */
async function save(docs: PrDocs, id: string, before: PullRequestDoc | null, after: PullRequestDoc) {
  docs.put(id, after);
  const tables = { buckets: docs.in('buckets'), costliest: docs.in('costliest'), repoMerges: docs.in('repo_merges') };
  await moveBuckets(tables, before, after);
}

/** The team of the tree `root`: null until one of its runs named a pull request. */
const teamOfTree = async (docs: PrDocs, root: string) => (await docs.in('trees').get(root))?.team_uid ?? null;

/** Sets each of the team's pull requests' share of the tree `root` (documents of pull requests not seen yet wait for their link). */
async function applyShares(docs: PrDocs, team: string, root: string, shares: readonly PrShare[]) {
  for (const share of shares) {
    const id = pullRequestKey(team, share.pr_id);
    const doc = await docs.get(id);
    if (!doc) continue;
    await save(
      docs,
      id,
      doc,
      derived({
        ...doc,
        shares: { ...doc.shares, [root]: { usd: share.usd, inference_by_model: share.inference_by_model } },
      }),
    );
  }
}

async function priced(
  e: RecordedEvent<Extract<LedgerEvent, { type: 'RunInferencePriced' | 'RunExecutionPriced' }>>,
  docs: PrDocs,
) {
  if (!e.data.pr_shares.length) return;
  const team = await teamOfTree(docs, e.data.root_run_id);
  if (team) await applyShares(docs, team, e.data.root_run_id, e.data.pr_shares);
}

function observe(doc: PullRequestDoc, d: PullRequestFactsObserved['data']): PullRequestDoc {
  const next: PullRequestDoc = { ...doc, interactions: { ...doc.interactions }, reviews: { ...doc.reviews } };
  const s = d.snapshot;
  if (s) {
    next.opened_at ??= s.opened_at;
    next.head_branch ??= s.head_branch;
    if (next.snapshot_at === null || (s.updated_at !== null && s.updated_at >= next.snapshot_at)) {
      next.title = s.title || next.title;
      next.author_login = s.author_login ?? next.author_login;
      next.state = s.merged ? 'merged' : s.state === 'closed' ? 'closed' : s.draft ? 'draft' : 'open';
      next.merged_at = s.merged_at;
      next.closed_at = s.closed_at;
      next.head_branch = s.head_branch ?? next.head_branch;
      next.additions = s.additions ?? next.additions;
      next.deletions = s.deletions ?? next.deletions;
      next.changed_files = s.changed_files ?? next.changed_files;
      next.num_commits = s.commits ?? next.num_commits;
      next.snapshot_at = s.updated_at ?? next.snapshot_at;
    }
  }
  if (d.event === 'pull_request' && d.action === 'opened') next.history_complete = true;
  if (d.interaction) putOwn(next.interactions, d.interaction.key, d.interaction.kind);
  if (d.review?.dismissed) delete next.interactions[`review:${d.review.id}`];
  else if (d.review) putOwn(next.reviews, d.review.id, d.review.submitted_at);
  const latest = [d.at, s?.updated_at ?? null].reduce<string | null>(
    (a, b) => (b !== null && (a === null || b > a) ? b : a),
    next.facts_at,
  );
  next.facts_at = latest;
  return derived(next);
}

export const pullRequestsProjection = projection<LedgerEvent | PullRequestEvent, PullRequestDoc, PrTables>({
  name: 'pull_requests',
  // 2: one document per team and pull request (issue #30), and the tree table; 3: the buckets
  // of the figures per factory and hour, day and month, and the merges per repository; 4: six-hour
  // and week rows besides them (issue #34).
  version: 4,
  // The list's order and its merged range, and the reactor's lookup by branch: the figures read
  // the buckets, so no index serves a count by first sighting or by repository's merges any more.
  indexes: [
    ['factory_uid', 'listed', 'opened_key'],
    ['factory_uid', 'listed', 'merged_at'],
    ['team_uid', 'repo_key', 'head_branch'],
  ],
  tables: { trees: [], buckets: [], costliest: [], repo_merges: [] },
  on: {
    PullRequestLinked: async (e, docs) => {
      const d = e.data;
      const id = pullRequestKey(d.team_uid, d.pr_id);
      docs.in('trees').put(d.root_run_id, { team_uid: d.team_uid });
      const existing = await docs.get(id);
      const doc = existing ?? blank({ ...d, factory_uid: null });
      if (!doc.runs.some((r) => r.run_id === d.run.run_id)) {
        const run = { run_id: d.run.run_id, root_run_id: d.run.root_run_id, created_at: d.run.created_at };
        const runs = [...doc.runs, run].sort((a, b) => a.created_at.localeCompare(b.created_at));
        const kickoff =
          doc.kickoff && doc.kickoff.created_at <= d.run.created_at
            ? doc.kickoff
            : {
                run_id: d.run.run_id,
                created_at: d.run.created_at,
                creator: d.run.creator,
                source: d.run.source,
                requested_model_id: d.run.requested_model_id,
              };
        const first = !doc.listed && d.factory_uid !== null;
        await save(
          docs,
          id,
          existing,
          derived({
            ...doc,
            ...(first ? { listed: true, first_seen_at: d.at, factory_uid: d.factory_uid } : {}),
            head_branch: doc.head_branch ?? d.branch,
            runs,
            kickoff,
            kickoff_at: kickoff.created_at,
            follow_ups: { ...doc.follow_ups, [d.run.run_id]: d.follow_ups },
          }),
        );
      }
      await applyShares(docs, d.team_uid, d.root_run_id, d.pr_shares);
    },
    RunInferencePriced: priced,
    RunExecutionPriced: priced,
    RunFollowUpCounted: async (e, docs) => {
      const team = e.data.pr_ids.length ? await teamOfTree(docs, e.data.root_run_id) : null;
      if (!team) return;
      for (const pr of e.data.pr_ids) {
        const id = pullRequestKey(team, pr);
        const doc = await docs.get(id);
        if (doc)
          await save(
            docs,
            id,
            doc,
            derived({ ...doc, follow_ups: { ...doc.follow_ups, [e.data.run_id]: e.data.follow_ups } }),
          );
      }
    },
    PullRequestFactsObserved: async (e, docs) => {
      const d = e.data;
      const id = pullRequestKey(d.team_uid, d.pr_id);
      const doc = await docs.get(id);
      await save(docs, id, doc, observe(doc ?? blank(d), d));
    },
  },
});
