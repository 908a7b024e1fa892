/**
 * The answers of the metrics, cost and pull-request operations (reference notes §8), and how a
 * pull request document renders as the hosted service's pull-request record.
 */
import { z } from 'zod';
import { cycleTime } from '../../projections/analytics/pr-buckets.js';
import type { PullRequestDoc } from '../../projections/analytics/pull-requests.js';

export const factoryScope = {
  as_of: z.string().describe('When the answer was made: the figures include everything recorded until then'),
  team_uid: z.string(),
  factory_uid: z.string(),
};

const range = {
  start_date: z
    .string()
    .describe('The start of the range counted (inclusive): start_date from the start of its UTC hour'),
  end_date: z.string().describe('The end of the range counted (exclusive): end_date to the end of its UTC hour'),
};

const periodList = z
  .array(z.string())
  .optional()
  .describe('With group_by_period: the start date (UTC) of each period; every series is aligned to it');

const dollars = z
  .object({ inference: z.number(), compute: z.number(), platform: z.number(), total: z.number() })
  .describe('US dollars, at the prices in force when the usage happened');
export type Dollars = z.infer<typeof dollars>;

const stage = z.object({
  median_seconds: z.number().nullable(),
  measured_pr_count: z.int().describe('Pull requests with both ends of the stage observed'),
});

const funnel = z.object({
  total_merged: z
    .int()
    .describe(
      "Pull requests merged in the range in the factory's repositories, by anyone, as its team's webhooks told",
    ),
  factory_merged: z.int().describe("Of them, the factory's runs produced"),
  factory_merged_observed: z.int().describe('Of those, whose whole history was observed (its opening)'),
  merged_without_human_code_change: z.int(),
  repos: z.array(z.string()),
});
const impact = z.object({
  additions: z.int(),
  deletions: z.int(),
  merged_pr_count: z.int(),
  measured_pr_count: z.int(),
});
const latency = z.object({
  merged_pr_count: z.int(),
  kickoff_to_pr: stage,
  pr_to_first_review: stage,
  first_review_to_merge: stage,
  kickoff_to_merge: stage,
});

export const metricsResource = z.object({
  ...factoryScope,
  ...range,
  run_count: z.int().describe('Runs created in the range, sub-runs included'),
  pr_count: z.int().describe('Pull requests first named by a run of the factory in the range'),
  merged_pr_count: z.int().describe('Of those, merged so far'),
  average_human_interactions_per_pr: z.number().nullable(),
  autonomy: z
    .number()
    .nullable()
    .describe('merged_without_human_code_change / factory_merged_observed; null without an observed merge'),
  autonomy_funnel: funnel,
  impact,
  pr_latency: latency,
  period_list: periodList,
  series: z
    .object({
      run_count: z.array(z.int()),
      pr_count: z.array(z.int()),
      merged_pr_count: z.array(z.int()),
      average_human_interactions_per_pr: z.array(z.number().nullable()),
      autonomy: z.array(z.number().nullable()),
      autonomy_funnel: z.array(funnel),
      impact: z.array(impact),
      pr_latency: z.array(latency),
    })
    .optional(),
});

export const RUN_GROUPS = ['agent_type', 'status', 'source', 'root_vs_subrun', 'model', 'harness'] as const;
export const COST_GROUPS = ['source', 'user', 'agent', 'model'] as const;

export const runBreakdownResource = z.object({
  ...factoryScope,
  ...range,
  group_by: z.enum(RUN_GROUPS),
  total: z.int().describe('Runs counted (root runs only when grouped by source)'),
  root_run_count: z.int(),
  groups: z.array(
    z.object({
      key: z.string(),
      label: z.string().optional(),
      total: z.int(),
      series: z.array(z.int()).optional(),
    }),
  ),
  period_list: periodList,
  series: z.object({ total: z.array(z.int()), root_run_count: z.array(z.int()) }).optional(),
});

export const costBreakdownResource = z.object({
  ...factoryScope,
  ...range,
  group_by: z.enum(COST_GROUPS),
  total: dollars,
  groups: z.array(
    z.object({
      key: z.string(),
      label: z.string(),
      deleted: z.boolean().describe('The user left the team, or the agent was deleted'),
      photo_url: z.string().nullable(),
      dollars,
      series: z.array(dollars).optional(),
    }),
  ),
  period_list: periodList,
  series: z.object({ total: z.array(dollars) }).optional(),
});

const means = {
  pr_count: z.array(z.int()),
  mean: z.array(z.number().nullable()),
  inference_mean: z.array(z.number().nullable()),
  compute_mean: z.array(z.number().nullable()),
  platform_mean: z.array(z.number().nullable()),
  median: z.array(z.number().nullable()),
};

export const costPerPrResource = z.object({
  ...factoryScope,
  ...range,
  pr_count: z.int().describe('Pull requests first seen in the range, merged or not'),
  dollars: dollars.describe('Their attributed cost, summed'),
  mean: dollars.nullable().describe('The mean per pull request, by category'),
  median: z.number().nullable().describe('The median of their total costs'),
  period_list: periodList,
  series: z.object({ dollars: z.array(dollars), ...means }).optional(),
});

export const PR_SIZES = ['S', 'M', 'L', 'XL'] as const;

const sizeSeries = z.object({ pr_count: means.pr_count, mean: means.mean, median: means.median });

export const costBySizeResource = z.object({
  ...factoryScope,
  ...range,
  pr_count: z.int(),
  sized_pr_count: z.int().describe('Pull requests whose line counts were observed'),
  buckets: z.array(
    z.object({
      size: z.enum(PR_SIZES),
      pr_count: z.int(),
      mean: dollars.nullable(),
      median: z.number().nullable(),
    }),
  ),
  period_list: periodList,
  series: z.object({ S: sizeSeries, M: sizeSeries, L: sizeSeries, XL: sizeSeries }).optional(),
});

const humanInteractions = z.object({
  opened: z.int(),
  code_push: z.int(),
  review_approved: z.int(),
  review_changes_requested: z.int(),
  review_commented: z.int(),
  comment: z.int(),
  review_comment: z.int(),
  pr_action: z.int(),
  follow_up_message: z.int(),
  total: z.int(),
});

export const pullRequestResource = z.object({
  provider: z.string(),
  repo_full_name: z.string().nullable(),
  pr_number: z.int().nullable(),
  url: z.string(),
  title: z.string().nullable(),
  author_login: z.string().nullable(),
  factory_uid: z.string(),
  team_uid: z.string(),
  state: z.enum(['open', 'draft', 'merged', 'closed']).nullable().describe('Null until a webhook delivery told it'),
  opened_at: z.string().nullable(),
  first_human_review_at: z.string().nullable(),
  merged_at: z.string().nullable(),
  closed_at: z.string().nullable(),
  updated_at: z.string().describe('When it last changed on the code host (else when first seen)'),
  first_seen_at: z.string().describe('When a run of the factory first named it'),
  additions: z.int().nullable(),
  deletions: z.int().nullable(),
  changed_files: z.int().nullable(),
  num_commits: z.int().nullable(),
  human_interactions: humanInteractions,
  human_code_change: z.boolean(),
  history_complete: z.boolean().describe('Its opening was observed, so its whole history was'),
  runs: z.array(z.object({ run_id: z.string(), root_run_id: z.string(), created_at: z.string() })),
  kickoff_at: z.string().nullable(),
  cycle_time: z.object({
    kickoff_to_pr: z.number().nullable(),
    pr_to_first_review: z.number().nullable(),
    first_review_to_merge: z.number().nullable(),
    kickoff_to_merge: z.number().nullable(),
  }),
});
export type PullRequestRecord = z.infer<typeof pullRequestResource>;

export const toPullRequestRecord = (pr: PullRequestDoc): PullRequestRecord => ({
  provider: pr.provider,
  repo_full_name: pr.repo_full_name,
  pr_number: pr.pr_number,
  url: pr.url,
  title: pr.title,
  author_login: pr.author_login,
  factory_uid: pr.factory_uid ?? '',
  team_uid: pr.team_uid ?? '',
  state: pr.state,
  opened_at: pr.opened_at,
  first_human_review_at: pr.first_human_review_at,
  merged_at: pr.merged_at,
  closed_at: pr.closed_at,
  updated_at: pr.updated_at,
  first_seen_at: pr.first_seen_at ?? '',
  additions: pr.additions,
  deletions: pr.deletions,
  changed_files: pr.changed_files,
  num_commits: pr.num_commits,
  human_interactions: pr.human_interactions,
  human_code_change: pr.human_code_change,
  history_complete: pr.history_complete,
  runs: pr.runs,
  kickoff_at: pr.kickoff_at,
  cycle_time: cycleTime(pr),
});

export const topPrResource = z.object({
  ...factoryScope,
  ...range,
  data: z.array(
    pullRequestResource.extend({
      dollars,
      models: z.array(z.object({ model_id: z.string(), share: z.number() })).describe('Share of its inference dollars'),
      creator: z.object({ type: z.string(), uid: z.string() }).nullable().describe('Who created its kickoff run'),
      source: z.string().nullable().describe("The source of its kickoff run's tree"),
      requested_model_id: z.string().nullable(),
    }),
  ),
});
