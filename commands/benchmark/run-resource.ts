/**
 * Benchmark runs as the API answers them, from the documents of the runs read model: their
 * progress and costs, with their launch settings and per-configuration figures when asked for.
 */
import { z } from 'zod';
import { pageInfoSchema } from '../../src/http/schemas.js';
import { own } from '../../src/own-keys.js';
import { BENCHMARK_RUN_STATES, type RunConfiguration, type RunScorer } from './events.js';
import type { BenchmarkRunDoc } from '../../projections/benchmark/benchmark-run-docs.js';
import { addTally, type Tally } from '../../projections/benchmark/tallies.js';
import {
  configurationNames,
  creditString,
  elapsedOf,
  progress,
  rate,
  scoreProgressOf,
  seconds,
  trialProgressOf,
} from './run-figures.js';
import { configurationResource, creatorOf, principal, toConfiguration } from './suite-resource.js';

const configurationStat = z.object({
  uid: z.string(),
  id: z.int(),
  display_name: z.string(),
  role: z.enum(['baseline', 'candidate']),
  model: z.string(),
  harness: z.string(),
  runner_id: z.string(),
  trial_count: z.int(),
  pass_count: z.int(),
  fail_count: z.int(),
  pass_rate: z.number().nullable().describe('pass_count / (pass_count + fail_count); null before a trial is scored'),
  avg_cost_usd_per_trial: z.number().nullable(),
  avg_total_credits_per_trial: z
    .string()
    .nullable()
    .describe("What a trial's runs cost in credits, on average (a decimal string); null without trials"),
  avg_wall_time_s: z.number().nullable(),
});

const configurationStatOf = (c: RunConfiguration, t: Tally) => ({
  ...configurationNames(c),
  runner_id: c.runner_id ?? '',
  trial_count: t.trials,
  pass_count: t.pass,
  fail_count: t.fail,
  pass_rate: rate(t.pass, t.fail),
  avg_cost_usd_per_trial: t.trials ? t.cost.total / t.trials : null,
  avg_total_credits_per_trial: t.trials ? creditString(t.credits.total / t.trials) : null,
  avg_wall_time_s: t.trials ? seconds(t.wall_ms / t.trials) : null,
});

export const runResource = z.object({
  uid: z.string(),
  factory_uid: z.string(),
  suite_uid: z.string(),
  suite_name: z.string(),
  suite_version: z.int().describe('The suite version the trials run'),
  state: z.enum(BENCHMARK_RUN_STATES),
  agent_uid: z.string(),
  agent_name: z.string(),
  repetition_count: z.int(),
  max_attempts: z.int().describe('Attempts a trial may use: the first and its retries'),
  trial_count: z.int(),
  task_count: z.int(),
  scorer_count: z.int(),
  cost_usd: z.number().describe("The trials' runs and their judges, in US dollars, as the cost ledger priced them"),
  total_credits: z.string().nullable().describe('The same in credits (a decimal string)'),
  elapsed_s: z.number().nullable().describe('From the start to the end (or now)'),
  progress,
  cancel_reason: z.string().nullable(),
  creator: principal,
  created_at: z.string(),
  updated_at: z.string(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  configurations: z
    .array(configurationResource.extend({ uid: z.string(), id: z.int() }))
    .optional()
    .describe('include=launch_settings'),
  scorer_selection: z.array(z.string()).optional().describe('include=launch_settings'),
  scorers: z
    .array(z.object({ uid: z.string(), name: z.string(), kind: z.string() }))
    .optional()
    .describe('include=launch_settings: the scorers that judge every trial, the built-in correctness scorer first'),
  tasks: z
    .array(z.object({ uid: z.string(), id: z.int(), title: z.string(), tags: z.array(z.string()) }))
    .optional()
    .describe('include=launch_settings'),
  configuration_stats: z.array(configurationStat).optional().describe('include=results'),
});

export const runsPage = z.object({
  data: z.array(runResource),
  runs: z.array(runResource).describe("The same page, under the hosted SDK's name"),
  page_info: pageInfoSchema,
});

export const RUN_INCLUDES = ['launch_settings', 'results', 'creator'] as const;
export type RunInclude = (typeof RUN_INCLUDES)[number];

const scorerListOf = (scorers: RunScorer[]) => scorers.map((s) => ({ uid: s.uid, name: s.name, kind: s.kind }));

type Who = { type: string; uid: string };
type Profiles = ReadonlyMap<string, { display_name: string | null; email: string | null }>;

const creatorWith = (c: Who, profiles?: Profiles) => {
  const p = profiles?.get(c.uid);
  return { ...creatorOf(c), ...(profiles ? { display_name: p?.display_name ?? null, email: p?.email ?? null } : {}) };
};

export function toRunResource(
  r: BenchmarkRunDoc,
  now: string,
  include: ReadonlySet<RunInclude> = new Set(),
  profiles?: Profiles,
): z.infer<typeof runResource> {
  const total = r.configurations.reduce(
    (sum, c) => addTally(sum, own(r.by_configuration, c.uid) ?? null),
    addTally<Tally>(null, null),
  );
  return {
    uid: r.uid,
    factory_uid: r.factory_uid,
    suite_uid: r.suite_uid,
    suite_name: r.suite_name,
    suite_version: r.suite_version,
    state: r.state,
    agent_uid: r.agent_uid,
    agent_name: r.agent_name,
    repetition_count: r.repetition_count,
    max_attempts: r.max_attempts,
    trial_count: r.trial_count,
    task_count: r.tasks.length,
    scorer_count: r.scorers.length,
    cost_usd: total.cost.total + total.scoring_cost.total,
    total_credits: creditString(total.credits.total + total.scoring_credits.total),
    elapsed_s: elapsedOf(r, now),
    progress: { trials: trialProgressOf(total), scores: scoreProgressOf(total) },
    cancel_reason: r.cancel_reason,
    creator: creatorWith(r.creator, include.has('creator') ? profiles : undefined),
    created_at: r.created_at,
    updated_at: r.updated_at,
    started_at: r.started_at,
    completed_at: r.completed_at,
    ...(include.has('launch_settings')
      ? {
          configurations: r.configurations.map((c) => ({ ...toConfiguration(c), uid: c.uid, id: c.id })),
          scorer_selection: r.scorer_selection,
          scorers: scorerListOf(r.scorers),
          tasks: r.tasks,
        }
      : {}),
    ...(include.has('results')
      ? {
          configuration_stats: r.configurations.map((c) =>
            configurationStatOf(c, own(r.by_configuration, c.uid) ?? addTally<Tally>(null, null)),
          ),
        }
      : {}),
  };
}
