/**
 * The pull-request figures of a factory summed per unit of time (./grains.ts; the `buckets` table of
 * the pull-request read model), so that a range's metrics and per-PR costs read the few rows that
 * tile it, not its pull requests: by the hour each was first seen (counts, interactions, dollars,
 * sizes; the costliest in `costliest`, ./pr-costliest.ts), by the hour it merged (the autonomy funnel, impact, latency medians);
 * and merges per team repository and hour (`repo_merges`, the funnel's `total_merged`).
 *
 * A pull request's contribution follows from its document, so when the document changes the old
 * contribution is taken out and the new put in, in the same commit: an event applied again changes
 * nothing (the document is already what it makes). Medians are sketches (./sketch.ts).
 */
import type { Usd } from '../../commands/analytics/events.js';
import type { Docs } from '../../src/projector/projection.js';
import { own, putOwn } from '../../src/own-keys.js';
import { bucketId, GRAINS, type Grain, grainStart } from './grains.js';
import { type CostliestBucket, moveCostliest, type TopEntry } from './pr-costliest.js';
import { emptySketch, type Sketch, withValue } from './sketch.js';

export type PrSize = 'S' | 'M' | 'L' | 'XL';
const PR_SIZE_KEYS: readonly PrSize[] = ['S', 'M', 'L', 'XL'];
export type Stage = 'kickoff_to_pr' | 'pr_to_first_review' | 'first_review_to_merge' | 'kickoff_to_merge';
export const STAGES: readonly Stage[] = [
  'kickoff_to_pr',
  'pr_to_first_review',
  'first_review_to_merge',
  'kickoff_to_merge',
];

/** What of a pull-request document its figures are made of. */
export interface BucketedPr {
  pr_id: string;
  team_uid: string;
  factory_uid: string | null;
  listed: boolean;
  first_seen_at: string | null;
  merged_at: string | null;
  opened_at: string | null;
  kickoff_at: string | null;
  first_human_review_at: string | null;
  repo_full_name: string | null;
  repo_key: string | null;
  history_complete: boolean;
  human_code_change: boolean;
  human_interactions: { total: number };
  additions: number | null;
  deletions: number | null;
  size: PrSize | null;
  cost: Usd & { total: number };
}

const between = (from: string | null, to: string | null): number | null =>
  from === null || to === null ? null : Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000);

/** The seconds of each stage of a pull request's cycle (null when one of its ends is unobserved). */
export const cycleTime = (pr: BucketedPr): Record<Stage, number | null> => ({
  kickoff_to_pr: between(pr.kickoff_at, pr.opened_at),
  pr_to_first_review: between(pr.opened_at, pr.first_human_review_at),
  first_review_to_merge: between(pr.first_human_review_at, pr.merged_at),
  kickoff_to_merge: between(pr.kickoff_at, pr.merged_at),
});

interface SizeFigures {
  count: number;
  usd: Usd;
  costs: Sketch;
}

export interface PrBucket {
  [field: string]: unknown;
  factory_uid: string;
  grain: Grain;
  at: string;
  /** The pull requests first seen in it. */
  seen: {
    count: number;
    merged: number;
    interactions: number;
    usd: Usd;
    costs: Sketch;
    sizes: Record<PrSize, SizeFigures>;
  };
  /** The pull requests merged in it. */
  merged: {
    count: number;
    observed: number;
    autonomous: number;
    additions: number;
    deletions: number;
    measured: number;
    /** How many are in each repository (`owner/repo` as the code host spells it). */
    repos: Record<string, number>;
    stages: Record<Stage, Sketch>;
  };
}

export interface RepoMergeBucket {
  [field: string]: unknown;
  grain: Grain;
  at: string;
  merged: number;
}

/** The owner of a team repository's merge rows. */
export const repoOwner = (team_uid: string, repo_key: string) => `${team_uid}/${repo_key}`;

const round = (usd: number) => Math.round(usd * 1e9) / 1e9;
const noUsd = (): Usd => ({ inference: 0, compute: 0, platform: 0 });
const addUsd = (a: Usd, b: Usd, sign: 1 | -1): Usd => ({
  inference: round(a.inference + sign * b.inference),
  compute: round(a.compute + sign * b.compute),
  platform: round(a.platform + sign * b.platform),
});

const blankBucket = (factory_uid: string, grain: Grain, at: string): PrBucket => ({
  factory_uid,
  grain,
  at,
  seen: {
    count: 0,
    merged: 0,
    interactions: 0,
    usd: noUsd(),
    costs: emptySketch(),
    sizes: Object.fromEntries(PR_SIZE_KEYS.map((s) => [s, { count: 0, usd: noUsd(), costs: emptySketch() }])) as Record<
      PrSize,
      SizeFigures
    >,
  },
  merged: {
    count: 0,
    observed: 0,
    autonomous: 0,
    additions: 0,
    deletions: 0,
    measured: 0,
    repos: {},
    stages: Object.fromEntries(STAGES.map((s) => [s, emptySketch()])) as Record<Stage, Sketch>,
  },
});

interface SeenPart {
  factory_uid: string;
  at: string;
  entry: TopEntry;
  merged: boolean;
  interactions: number;
  usd: Usd;
  size: PrSize | null;
}

interface MergedPart {
  factory_uid: string;
  at: string;
  observed: boolean;
  autonomous: boolean;
  additions: number | null;
  deletions: number | null;
  repo: string | null;
  stages: Record<Stage, number | null>;
}

function seenPart(pr: BucketedPr | null): SeenPart | null {
  if (!pr?.listed || pr.factory_uid === null || pr.first_seen_at === null) return null;
  const { inference, compute, platform, total } = pr.cost;
  return {
    factory_uid: pr.factory_uid,
    at: pr.first_seen_at,
    entry: { key: `${pr.team_uid}:${pr.pr_id}`, pr_id: pr.pr_id, total, first_seen_at: pr.first_seen_at },
    merged: pr.merged_at !== null,
    interactions: pr.human_interactions.total,
    usd: { inference, compute, platform },
    size: pr.size,
  };
}

function mergedPart(pr: BucketedPr | null): MergedPart | null {
  if (!pr?.listed || pr.factory_uid === null || pr.merged_at === null) return null;
  return {
    factory_uid: pr.factory_uid,
    at: pr.merged_at,
    observed: pr.history_complete,
    autonomous: pr.history_complete && !pr.human_code_change,
    additions: pr.additions,
    deletions: pr.deletions,
    repo: pr.repo_full_name,
    stages: cycleTime(pr),
  };
}

function addSeen(row: PrBucket, p: SeenPart, sign: 1 | -1): PrBucket['seen'] {
  const s = row.seen;
  const sizes = { ...s.sizes };
  if (p.size) {
    const of = sizes[p.size];
    sizes[p.size] = {
      count: of.count + sign,
      usd: addUsd(of.usd, p.usd, sign),
      costs: withValue(of.costs, p.entry.total, sign),
    };
  }
  return {
    count: s.count + sign,
    merged: s.merged + (p.merged ? sign : 0),
    interactions: s.interactions + sign * p.interactions,
    usd: addUsd(s.usd, p.usd, sign),
    costs: withValue(s.costs, p.entry.total, sign),
    sizes,
  };
}

function addMerged(row: PrBucket, p: MergedPart, sign: 1 | -1): PrBucket['merged'] {
  const m = row.merged;
  const measured = p.additions !== null && p.deletions !== null;
  const repos = { ...m.repos };
  if (p.repo !== null) {
    const n = (own(repos, p.repo) ?? 0) + sign;
    if (n === 0) delete repos[p.repo];
    else putOwn(repos, p.repo, n);
  }
  const stages = { ...m.stages };
  for (const s of STAGES) if (p.stages[s] !== null) stages[s] = withValue(stages[s], p.stages[s]!, sign);
  return {
    count: m.count + sign,
    observed: m.observed + (p.observed ? sign : 0),
    autonomous: m.autonomous + (p.autonomous ? sign : 0),
    additions: m.additions + (measured ? sign * p.additions! : 0),
    deletions: m.deletions + (measured ? sign * p.deletions! : 0),
    measured: m.measured + (measured ? sign : 0),
    repos,
    stages,
  };
}

type BucketDocs = Docs<PrBucket>;

const idOf = (grain: Grain, p: { factory_uid: string; at: string }) =>
  bucketId(grain, p.factory_uid, grainStart(p.at, grain));

async function rowOf(docs: BucketDocs, grain: Grain, p: { factory_uid: string; at: string }) {
  return (await docs.get(idOf(grain, p))) ?? blankBucket(p.factory_uid, grain, grainStart(p.at, grain));
}

const sameUsd = (a: Usd, b: Usd) => a.inference === b.inference && a.compute === b.compute && a.platform === b.platform;

/** Whether two first-seen parts count the same (they are made of one pull request's documents). */
const sameSeen = (a: SeenPart | null, b: SeenPart | null) =>
  a === null || b === null
    ? a === b
    : a.at === b.at &&
      a.factory_uid === b.factory_uid &&
      a.entry.total === b.entry.total &&
      a.merged === b.merged &&
      a.interactions === b.interactions &&
      a.size === b.size &&
      sameUsd(a.usd, b.usd);

/** Moves a pull request's part (first-seen or merged figures) at one grain from `from`'s row to `to`'s. */
async function moveFigures<P extends { factory_uid: string; at: string }>(
  docs: BucketDocs,
  grain: Grain,
  [from, to]: [P | null, P | null],
  add: (row: PrBucket, part: P, sign: 1 | -1) => Partial<PrBucket>,
) {
  for (const [part, sign] of [
    [from, -1],
    [to, 1],
  ] as const) {
    if (!part) continue;
    const row = await rowOf(docs, grain, part);
    docs.put(idOf(grain, part), { ...row, ...add(row, part, sign) });
  }
}

/** Moves a team repository's merge count from when `before` merged to when `after` did. */
async function moveRepoMerge(docs: Docs<RepoMergeBucket>, before: BucketedPr | null, after: BucketedPr) {
  const part = (pr: BucketedPr | null) =>
    pr?.repo_key && pr.merged_at ? { owner: repoOwner(pr.team_uid, pr.repo_key), at: pr.merged_at } : null;
  const [from, to] = [part(before), part(after)];
  if (JSON.stringify(from) === JSON.stringify(to)) return;
  for (const grain of GRAINS)
    for (const [p, sign] of [
      [from, -1],
      [to, 1],
    ] as const) {
      if (!p) continue;
      const at = grainStart(p.at, grain);
      const id = bucketId(grain, p.owner, at);
      const row = (await docs.get(id)) ?? { grain, at, merged: 0 };
      docs.put(id, { ...row, merged: row.merged + sign });
    }
}

/** Takes `before`'s contribution out of the buckets and puts `after`'s in (nothing when they are the same). */
export async function moveBuckets(
  tables: { buckets: BucketDocs; costliest: Docs<CostliestBucket>; repoMerges: Docs<RepoMergeBucket> },
  before: BucketedPr | null,
  after: BucketedPr,
): Promise<void> {
  const { buckets, costliest, repoMerges } = tables;
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const seen: [SeenPart | null, SeenPart | null] = [seenPart(before), seenPart(after)];
  const [s0, s1] = seen;
  const costMoved = s0?.entry.total !== s1?.entry.total || s0?.at !== s1?.at;
  if (!sameSeen(s0, s1))
    for (const grain of GRAINS) {
      await moveFigures(buckets, grain, seen, (row, part, sign) => ({ seen: addSeen(row, part, sign) }));
      if (costMoved) await moveCostliest(costliest, grain, s0, s1);
    }
  const merged: [MergedPart | null, MergedPart | null] = [mergedPart(before), mergedPart(after)];
  if (!same(...merged))
    for (const grain of GRAINS)
      await moveFigures(buckets, grain, merged, (row, part, sign) => ({ merged: addMerged(row, part, sign) }));
  await moveRepoMerge(repoMerges, before, after);
}
