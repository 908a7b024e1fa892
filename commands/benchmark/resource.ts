/**
 * Benchmarks as the API takes and answers them: suites, tasks, runs, trials and results (from
 * the documents of their read models), every body with its bounds, and the comparison of pass
 * rates. The tallies the runs read model keeps are its own (projections/benchmark/tallies.ts).
 */
import { z } from 'zod';
import { boundedJson, pageInfoSchema } from '../../src/http/schemas.js';
import { fisherExactTwoSided } from './stats.js';
import { BENCHMARK_RUN_STATES, type Configuration, type RunConfiguration, type RunScorer } from './events.js';
import { own } from '../../src/own-keys.js';
import type { BenchmarkRunDoc, TrialDoc } from '../../projections/benchmark/benchmark-runs.js';
import type { SuiteDoc, SuiteTaskDoc } from '../../projections/benchmark/benchmark-suites.js';
import { addTally, type Tally, tallyOf } from '../../projections/benchmark/tallies.js';

// ---- bounds ------------------------------------------------------------------------------------

const MAX_TITLE = 200;
export const MAX_PROMPT = 100_000;
const MAX_CRITERIA = 20_000;
const MAX_TAGS = 20;
const MAX_REFS = 10;
const MAX_LABELS = 20;
const MAX_CONFIGURATIONS = 10;
const MAX_REPETITIONS = 50;
export const MAX_TRIALS = 1000;
const MAX_ATTEMPTS = 5;
export const DEFAULT_MAX_ATTEMPTS = 3;
const MAX_SELECTED_SCORERS = 20;

// ---- bodies ------------------------------------------------------------------------------------

const nonBlank = (max: number) => z.string().trim().min(1, 'must not be empty').max(max);

const suiteUidSchema = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
    'a suite uid is 1-64 characters of [A-Za-z0-9._-], starting with a letter or digit',
  )
  .refine((u) => !['suites', 'runs'].includes(u.toLowerCase()), 'suites and runs are not suite uids');

const repoRef = z
  .object({
    code_forge: z.string().trim().min(1).max(50),
    owner: z.string().trim().min(1).max(200),
    repo: z.string().trim().min(1).max(200),
    ref: z.string().trim().min(1).max(255).optional(),
  })
  .strict();

const tags = z.array(z.string().trim().min(1).max(64)).max(MAX_TAGS);
/** Room for the 20 labels of 64 and 256 characters, however escaped: checked before the keys are walked. */
const labels = boundedJson(
  { maxBytes: 16 * 1024, maxDepth: 1 },
  z
    .record(z.string().trim().min(1).max(64), z.string().max(256))
    .refine((l) => Object.keys(l).length <= MAX_LABELS, `at most ${MAX_LABELS} labels`),
);

const taskFields = {
  title: nonBlank(MAX_TITLE),
  prompt: nonBlank(MAX_PROMPT),
  success_criteria: nonBlank(MAX_CRITERIA),
  source_run_id: z.string().trim().min(1).max(128),
  starting_repo_refs: z.array(repoRef).max(MAX_REFS),
  tags,
  labels,
};

export const createTaskBody = z
  .object({
    title: taskFields.title,
    prompt: taskFields.prompt.optional(),
    success_criteria: taskFields.success_criteria,
    source_run_id: taskFields.source_run_id.nullish(),
    starting_repo_refs: taskFields.starting_repo_refs.optional(),
    tags: taskFields.tags.optional(),
    labels: taskFields.labels.optional(),
  })
  .strict();

export type CreateTaskBody = z.infer<typeof createTaskBody>;

/** Omitted fields keep their values; `title`, `prompt`, `success_criteria` refuse null and blank; null `source_run_id` and empty lists clear. */
export const patchTaskBody = z
  .object({
    title: taskFields.title.optional(),
    prompt: taskFields.prompt.optional(),
    success_criteria: taskFields.success_criteria.optional(),
    source_run_id: taskFields.source_run_id.nullable().optional(),
    starting_repo_refs: taskFields.starting_repo_refs.optional(),
    tags: taskFields.tags.optional(),
    labels: taskFields.labels.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one field to change' });

export const HARNESSES = ['oz', 'claude', 'gemini', 'codex'] as const;

const agentConfigEntry = z
  .object({
    agent_uid: z.string().trim().min(1).max(128),
    agent_name: z.string().trim().min(1).max(200).optional(),
    harness: z.enum(HARNESSES),
    model: z.string().trim().min(1).max(200),
    harness_auth_secret_name: z.string().trim().min(1).max(200).nullish(),
  })
  .strict();

export const configurationBody = z
  .object({
    role: z.enum(['baseline', 'candidate']),
    display_name: z.string().trim().max(200).nullish(),
    model: z.string().trim().min(1).max(200).nullish(),
    harness: z.enum(HARNESSES).nullish(),
    harness_auth_secret_name: z.string().trim().min(1).max(200).nullish(),
    runner_id: z.string().trim().min(1).max(128).nullish(),
    agent_configs: z.array(agentConfigEntry).max(20).optional(),
  })
  .strict();

const configurations = z
  .array(configurationBody)
  .min(1, 'give at least one configuration')
  .max(MAX_CONFIGURATIONS)
  .refine((l) => l.filter((c) => c.role === 'baseline').length <= 1, 'at most one configuration is the baseline');

export const configurationOf = (c: z.infer<typeof configurationBody>): Configuration => ({
  role: c.role,
  display_name: c.display_name || null,
  model: c.model ?? null,
  harness: c.harness ?? null,
  harness_auth_secret_name: c.harness_auth_secret_name ?? null,
  runner_id: c.runner_id ?? null,
  agent_configs: (c.agent_configs ?? []).map((a) => ({
    ...a,
    harness_auth_secret_name: a.harness_auth_secret_name ?? null,
  })),
});

export const createSuiteBody = z
  .object({
    uid: suiteUidSchema.optional(),
    name: nonBlank(200),
    description: z.string().max(2000).nullish(),
    agent_uid: z.string().trim().min(1).max(128).optional(),
    factory_agent_type: z.string().trim().min(1).max(50).optional(),
    configurations: configurations.optional(),
    tasks: z.array(createTaskBody).max(100).optional(),
  })
  .strict();

export const patchSuiteBody = z
  .object({
    name: nonBlank(200).optional(),
    description: z.string().max(2000).nullish(),
    agent_uid: z.string().trim().min(1).max(128).optional(),
    factory_agent_type: z.string().trim().min(1).max(50).optional(),
    configurations: z.array(configurationBody).max(MAX_CONFIGURATIONS).nullish(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one field to change' });

export const launchBody = z
  .object({
    repetition_count: z.int().min(1).max(MAX_REPETITIONS),
    configurations: configurations.optional(),
    scorer_selection: z
      .array(z.string().trim().min(1).max(128))
      .max(MAX_SELECTED_SCORERS)
      .refine((l) => new Set(l).size === l.length, 'a scorer is named twice')
      .optional(),
    tasks: z
      .array(z.string().trim().min(1).max(128))
      .min(1, 'give at least one task, or omit tasks to run them all')
      .max(100)
      .refine((l) => new Set(l).size === l.length, 'a task is named twice')
      .optional(),
    max_attempts: z.int().min(1).max(MAX_ATTEMPTS).optional(),
  })
  .strict();

export type LaunchBody = z.infer<typeof launchBody>;

export const factoryParams = z.object({ factory_uid: z.string().min(1).max(128) });
export const suiteParams = factoryParams.extend({ suite_uid: z.string().min(1).max(128) });
export const taskParams = suiteParams.extend({ task_uid: z.string().min(1).max(128) });
export const runParams = suiteParams.extend({ run_uid: z.string().min(1).max(128) });

// ---- answers: suites and tasks -----------------------------------------------------------------

const principal = z.object({
  type: z.enum(['user', 'service_account']),
  uid: z.string(),
  display_name: z.string().nullable().optional(),
  email: z.string().nullable().optional(),
});

const creatorOf = (c: { type: string; uid: string }) => ({
  type: c.type === 'user' ? ('user' as const) : ('service_account' as const),
  uid: c.uid,
});

const configurationResource = z.object({
  role: z.enum(['baseline', 'candidate']),
  display_name: z.string().describe('Empty when none was given'),
  model: z.string().describe("Empty: the agent's default"),
  harness: z.string().describe("Empty: the agent's default"),
  harness_auth_secret_name: z.string().nullable(),
  runner_id: z.string().nullable(),
  agent_configs: z.array(
    z.object({
      agent_uid: z.string(),
      agent_name: z.string().optional(),
      harness: z.string(),
      model: z.string(),
      harness_auth_secret_name: z.string().nullable().optional(),
    }),
  ),
});

const toConfiguration = (c: Configuration) => ({
  role: c.role,
  display_name: c.display_name ?? '',
  model: c.model ?? '',
  harness: c.harness ?? '',
  harness_auth_secret_name: c.harness_auth_secret_name,
  runner_id: c.runner_id,
  agent_configs: c.agent_configs,
});

export const taskResource = z.object({
  uid: z.string().describe('Immutable task UID'),
  id: z.int().describe("The task's number in its suite (the hosted service's deprecated numeric id)"),
  title: z.string(),
  prompt: z.string(),
  success_criteria: z.string().describe('What the built-in correctness scorer grades each trial against'),
  source_run_id: z.string().nullable(),
  starting_repo_refs: z.array(
    z.object({ code_forge: z.string(), owner: z.string(), repo: z.string(), ref: z.string().optional() }),
  ),
  tags: z.array(z.string()),
  labels: z.record(z.string(), z.string()),
  created_at: z.string(),
  updated_at: z.string(),
});

export const suiteResource = z.object({
  uid: z.string(),
  factory_uid: z.string(),
  name: z.string(),
  description: z.string().optional(),
  agent_uid: z.string().describe('The factory agent every trial runs as'),
  factory_agent_type: z.string(),
  configurations: z.array(configurationResource).optional().describe('Launch defaults, when the suite has some'),
  creator: principal,
  version: z.int().describe('Bumped by every change of the suite or of one of its tasks'),
  task_count: z.int(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const suiteWithTasks = suiteResource.extend({
  tasks: z.array(taskResource),
  spawnable_descendant_agent_uids: z
    .array(z.string())
    .describe('Agents a trial may start (none: Shopfloor has no delegation policy yet)'),
});

export const suitesPage = z.object({
  data: z.array(suiteResource),
  suites: z.array(suiteResource).describe("The same page, under the hosted SDK's name"),
  page_info: pageInfoSchema,
});

// ---- answers: runs -----------------------------------------------------------------------------

const progress = z.object({
  trials: z.object({
    total: z.int(),
    pending: z.int(),
    running: z.int(),
    succeeded: z.int(),
    failed: z.int(),
    cancelled: z.int(),
    completed: z.int().describe('succeeded + failed + cancelled'),
  }),
  scores: z.object({
    awaiting_trial: z.int(),
    pending: z.int(),
    judging: z.int(),
    scored: z.int(),
    finished_unscored: z.int(),
    not_scoreable: z.int(),
    received: z.int().describe('scored'),
    expected: z.int().describe('judging + scored + finished_unscored'),
  }),
});

const trialProgressOf = (t: Tally) => ({
  total: t.trials,
  pending: t.pending,
  running: t.running,
  succeeded: t.succeeded,
  failed: t.failed,
  cancelled: t.cancelled,
  completed: t.succeeded + t.failed + t.cancelled,
});

const scoreProgressOf = (t: Tally) => ({
  ...t.ledger,
  pending: 0,
  received: t.ledger.scored,
  expected: t.ledger.judging + t.ledger.scored + t.ledger.finished_unscored,
});

const rate = (pass: number, fail: number) => (pass + fail > 0 ? pass / (pass + fail) : null);
const seconds = (ms: number) => Math.round(ms) / 1000;
/** Credits as the hosted service answers them: a decimal string (to the millionth of a credit). */
const creditString = (credits: number) => String(Math.round(credits * 1e6) / 1e6);

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
  uid: c.uid,
  id: c.id,
  display_name: c.display_name ?? '',
  role: c.role,
  model: c.model ?? '',
  harness: c.harness ?? '',
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

/** The elapsed time of a run: from its start to its end, or to `now` while in flight. */
const elapsedOf = (run: { started_at: string | null; completed_at: string | null }, now: string) =>
  run.started_at ? Math.max(0, Date.parse(run.completed_at ?? now) - Date.parse(run.started_at)) / 1000 : null;

const scorerListOf = (scorers: RunScorer[]) => scorers.map((s) => ({ uid: s.uid, name: s.name, kind: s.kind }));

// ---- answers: trials ---------------------------------------------------------------------------

const dollars = z.object({ inference: z.number(), compute: z.number(), platform: z.number(), total: z.number() });

const attemptResource = z.object({
  attempt_number: z.int(),
  run_id: z.string(),
  state: z.string().describe("The agent run's state (its terminal one once it ended)"),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  run_time_s: z.number(),
  cost_usd: z.number(),
});

const scoreResource = z.object({
  scorer_uid: z.string(),
  scorer_name: z.string(),
  kind: z.string(),
  status: z.enum(['awaiting_trial', 'judging', 'scored', 'finished_unscored', 'not_scoreable']),
  classification: z.string().nullable(),
  score: z.number().nullable(),
  passed: z.boolean().nullable().describe("Against the scorer's threshold when the score was recorded"),
  error: z.string().nullable(),
  scored_at: z.string().nullable(),
});

const trialMetrics = z.object({
  cost_usd: z.number().describe("The trial's runs, every attempt"),
  cost: dollars,
  scoring_cost_usd: z.number().describe("The trial's judge runs"),
  wall_time_s: z.number().describe('Time its runs spent executing, every attempt'),
  retries: z.int(),
});

export const trialResource = z.object({
  uid: z.string(),
  id: z.int(),
  benchmark_run_uid: z.string(),
  configuration_uid: z.string(),
  configuration_id: z.int(),
  task_uid: z.string(),
  suite_task_id: z.int(),
  task_title: z.string(),
  rep_index: z.int(),
  state: z.enum(['pending', 'running', 'succeeded', 'failed', 'cancelled']),
  run_id: z.string().describe("The current attempt's agent run"),
  attempt_count: z.int(),
  outcome: z
    .enum(['pass', 'fail'])
    .nullable()
    .describe('The correctness scorer: pass or fail; fail too when every attempt failed; null while unknown'),
  failure_reason: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  matched_attempt_number: z.int().optional().describe('With agent_run_id: the attempt that run was'),
  scores: z.array(scoreResource).optional(),
  metrics: trialMetrics.optional(),
  attempts: z.array(attemptResource).optional(),
  judge_runs: z
    .array(z.object({ scorer_uid: z.string(), attempt_id: z.string(), judge_run_id: z.string() }))
    .optional(),
});

export const trialsPage = z.object({ data: z.array(trialResource), page_info: pageInfoSchema });

// ---- answers: results --------------------------------------------------------------------------

/** Candidates are compared with the baseline at this family-wise level (Bonferroni across candidates). */
const ALPHA = 0.05;

const comparisonResource = z.object({
  baseline_uid: z.string(),
  candidate_uid: z.string(),
  baseline: z.object({ pass_count: z.int(), trial_count: z.int(), pass_rate: z.number().nullable() }),
  candidate: z.object({ pass_count: z.int(), trial_count: z.int(), pass_rate: z.number().nullable() }),
  difference: z.number().nullable().describe('Candidate pass rate minus baseline pass rate'),
  method: z.literal('fisher_exact_two_sided'),
  p_value: z.number().nullable(),
  alpha: z.number().describe('0.05 divided by the number of candidates compared (Bonferroni)'),
  significant: z.boolean(),
  verdict: z.enum(['candidate_better', 'baseline_better', 'no_significant_difference', 'insufficient_data']),
});

export type Comparison = z.infer<typeof comparisonResource>;

/**
 * Whether a candidate's pass rate differs from the baseline's by more than chance: Fisher's exact
 * test, two-sided, on the scored trials (pass against fail), at ALPHA divided by the number of
 * candidates. Insufficient data while either side has no scored trial.
 */
export function compare(
  baseline: { uid: string; pass: number; fail: number },
  candidate: { uid: string; pass: number; fail: number },
  candidates: number,
): Comparison {
  const n = baseline.pass + baseline.fail;
  const m = candidate.pass + candidate.fail;
  const alpha = ALPHA / Math.max(1, candidates);
  const side = (pass: number, count: number) => ({
    pass_count: pass,
    trial_count: count,
    pass_rate: count ? pass / count : null,
  });
  const base = {
    baseline_uid: baseline.uid,
    candidate_uid: candidate.uid,
    baseline: side(baseline.pass, n),
    candidate: side(candidate.pass, m),
    method: 'fisher_exact_two_sided' as const,
    alpha,
  };
  if (!n || !m) return { ...base, difference: null, p_value: null, significant: false, verdict: 'insufficient_data' };
  const difference = candidate.pass / m - baseline.pass / n;
  const p_value = fisherExactTwoSided(candidate.pass, m, baseline.pass, n);
  const significant = p_value < alpha;
  return {
    ...base,
    difference,
    p_value,
    significant,
    verdict: !significant ? 'no_significant_difference' : difference > 0 ? 'candidate_better' : 'baseline_better',
  };
}

const scorerRate = z.object({
  configuration_uid: z.string(),
  pass_count: z.int(),
  fail_count: z.int(),
  unscored_count: z.int(),
  pass_rate: z.number().nullable(),
});

export const resultsResource = z.object({
  benchmark_run_uid: z.string(),
  run_state: z.enum(BENCHMARK_RUN_STATES),
  provisional: z.boolean().describe('True while the run is pending, running or scoring: every figure may change'),
  summary_status: z.enum(['pending', 'available', 'unavailable']).describe('Always unavailable: no summary is written'),
  incomplete_reason: z.string().nullable(),
  suite_name: z.string(),
  repetition_count: z.int(),
  configurations: z.array(
    z.object({
      uid: z.string(),
      id: z.int(),
      display_name: z.string(),
      role: z.enum(['baseline', 'candidate']),
      model: z.string(),
      harness: z.string(),
      scoring: z.object({
        pass_count: z.int(),
        fail_count: z.int(),
        unscored_count: z.int(),
        pass_rate: z.number().nullable(),
      }),
      metrics: z.object({
        trial_count: z.int(),
        succeeded_count: z.int(),
        failed_count: z.int(),
        cancelled_count: z.int(),
        cost_usd: z.number(),
        avg_cost_usd_per_trial: z.number().nullable(),
        scoring_cost_usd: z.number(),
        wall_time_s: z.number(),
        avg_wall_time_s: z.number().nullable(),
      }),
      retry_count: z.int().describe('Retries across its trials (attempts beyond the first)'),
      retried_trial_count: z.int(),
    }),
  ),
  scorers: z.array(
    z.object({ uid: z.string(), name: z.string(), kind: z.string(), configurations: z.array(scorerRate) }),
  ),
  comparisons: z
    .array(comparisonResource)
    .describe('Each candidate against the baseline: is the difference in pass rate more than chance?'),
  trial_progress: progress.shape.trials,
  score_progress: progress.shape.scores,
  trials_being_judged: z.int(),
  trials_scoring_finished: z.int(),
  run_metrics: z.object({
    cost_usd: z.number(),
    scoring_cost_usd: z.number(),
    total_cost_usd: z.number(),
    total_credits: z.string().nullable().describe('total_cost_usd in credits (a decimal string)'),
    elapsed_s: z.number().nullable(),
  }),
  trials: z.array(trialResource).optional().describe('include=trials: every trial used, with scores and metrics'),
});

export type Results = z.infer<typeof resultsResource>;

/** The results of a run from the tallies of the trials chosen (by configuration). */
export function resultsOf(
  run: {
    uid: string;
    state: (typeof BENCHMARK_RUN_STATES)[number];
    suite_name: string;
    repetition_count: number;
    configurations: RunConfiguration[];
    scorers: RunScorer[];
    cancel_reason: string | null;
    started_at: string | null;
    completed_at: string | null;
  },
  tallies: ReadonlyMap<string, Tally>,
  now: string,
  rows: { configurations: ReadonlySet<string> | null; scorers: ReadonlySet<string> | null },
): Omit<Results, 'trials'> {
  const tallyOfConfig = (uid: string) => tallies.get(uid) ?? addTally<Tally>(null, null);
  const total = run.configurations.reduce((sum, c) => addTally(sum, tallyOfConfig(c.uid)), addTally<Tally>(null, null));
  const shown = run.configurations.filter((c) => !rows.configurations || rows.configurations.has(c.uid));
  const baseline = run.configurations.find((c) => c.role === 'baseline');
  const candidates = run.configurations.filter((c) => c.role === 'candidate');
  const outcome = (c: RunConfiguration) => ({
    uid: c.uid,
    pass: tallyOfConfig(c.uid).pass,
    fail: tallyOfConfig(c.uid).fail,
  });
  const provisional = ['pending', 'running', 'scoring'].includes(run.state);
  return {
    benchmark_run_uid: run.uid,
    run_state: run.state,
    provisional,
    summary_status: 'unavailable',
    incomplete_reason:
      run.state === 'cancelled'
        ? `cancelled (${run.cancel_reason ?? 'no reason given'}): the figures hold only the trials that ended and were judged before`
        : run.state === 'failed'
          ? "no trial's run succeeded: there was nothing to judge"
          : null,
    suite_name: run.suite_name,
    repetition_count: run.repetition_count,
    configurations: shown.map((c) => {
      const t = tallyOfConfig(c.uid);
      return {
        uid: c.uid,
        id: c.id,
        display_name: c.display_name ?? '',
        role: c.role,
        model: c.model ?? '',
        harness: c.harness ?? '',
        scoring: {
          pass_count: t.pass,
          fail_count: t.fail,
          unscored_count: t.unscored,
          pass_rate: rate(t.pass, t.fail),
        },
        metrics: {
          trial_count: t.trials,
          succeeded_count: t.succeeded,
          failed_count: t.failed,
          cancelled_count: t.cancelled,
          cost_usd: t.cost.total,
          avg_cost_usd_per_trial: t.trials ? t.cost.total / t.trials : null,
          scoring_cost_usd: t.scoring_cost.total,
          wall_time_s: seconds(t.wall_ms),
          avg_wall_time_s: t.trials ? seconds(t.wall_ms / t.trials) : null,
        },
        retry_count: t.retries,
        retried_trial_count: t.retried_trials,
      };
    }),
    scorers: run.scorers
      .filter((s) => !rows.scorers || rows.scorers.has(s.uid))
      .map((s) => ({
        uid: s.uid,
        name: s.name,
        kind: s.kind,
        configurations: shown.map((c) => {
          const r = own(tallyOfConfig(c.uid).scorers, s.uid) ?? { pass: 0, fail: 0, unscored: 0 };
          return {
            configuration_uid: c.uid,
            pass_count: r.pass,
            fail_count: r.fail,
            unscored_count: r.unscored,
            pass_rate: rate(r.pass, r.fail),
          };
        }),
      })),
    comparisons: baseline
      ? candidates
          .filter(
            (c) => !rows.configurations || rows.configurations.has(c.uid) || rows.configurations.has(baseline.uid),
          )
          .map((c) => compare(outcome(baseline), outcome(c), candidates.length))
      : [],
    trial_progress: trialProgressOf(total),
    score_progress: scoreProgressOf(total),
    trials_being_judged: total.judging_trials,
    trials_scoring_finished: total.scoring_finished_trials,
    run_metrics: {
      cost_usd: total.cost.total,
      scoring_cost_usd: total.scoring_cost.total,
      total_cost_usd: total.cost.total + total.scoring_cost.total,
      total_credits: creditString(total.credits.total + total.scoring_credits.total),
      elapsed_s: elapsedOf(run, now),
    },
  };
}

// ---- documents to resources --------------------------------------------------------------------

type Who = { type: string; uid: string };
type Profiles = ReadonlyMap<string, { display_name: string | null; email: string | null }>;

const creatorWith = (c: Who, profiles?: Profiles) => {
  const p = profiles?.get(c.uid);
  return { ...creatorOf(c), ...(profiles ? { display_name: p?.display_name ?? null, email: p?.email ?? null } : {}) };
};

export const toSuiteResource = (s: SuiteDoc): z.infer<typeof suiteResource> => ({
  uid: s.uid,
  factory_uid: s.factory_uid,
  name: s.name,
  ...(s.description ? { description: s.description } : {}),
  agent_uid: s.agent_uid,
  factory_agent_type: s.factory_agent_type,
  ...(s.configurations.length ? { configurations: s.configurations.map(toConfiguration) } : {}),
  creator: creatorOf(s.creator),
  version: s.version,
  task_count: s.task_count,
  created_at: s.created_at,
  updated_at: s.updated_at,
});

export const toTaskResource = (t: SuiteTaskDoc): z.infer<typeof taskResource> => ({
  uid: t.uid,
  id: t.id,
  title: t.title,
  prompt: t.prompt,
  success_criteria: t.success_criteria,
  source_run_id: t.source_run_id,
  starting_repo_refs: t.starting_repo_refs,
  tags: t.tags,
  labels: t.labels,
  created_at: t.created_at,
  updated_at: t.updated_at,
});

export type RunInclude = (typeof RUN_INCLUDES)[number];

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

export interface TrialExpansions {
  scores?: boolean;
  metrics?: boolean;
  attempts?: boolean;
  judge_runs?: boolean;
}

export function toTrialResource(
  t: TrialDoc,
  scorers: RunScorer[],
  expand: TrialExpansions = {},
): z.infer<typeof trialResource> {
  const names = new Map(scorers.map((s) => [s.uid, s]));
  const tally = tallyOf(t);
  return {
    uid: t.uid,
    id: t.id,
    benchmark_run_uid: t.benchmark_run_uid,
    configuration_uid: t.configuration_uid,
    configuration_id: t.configuration_id,
    task_uid: t.task_uid,
    suite_task_id: t.task_id,
    task_title: t.task_title,
    rep_index: t.rep_index,
    state: t.state,
    run_id: t.run_id,
    attempt_count: t.attempts.length,
    outcome: t.outcome,
    failure_reason: t.failure_reason,
    created_at: t.created_at,
    updated_at: t.updated_at,
    finished_at: t.finished_at,
    ...(expand.scores
      ? {
          scores: t.scores.map((s) => ({
            scorer_uid: s.scorer_uid,
            scorer_name: names.get(s.scorer_uid)?.name ?? '',
            kind: names.get(s.scorer_uid)?.kind ?? 'user',
            status: s.status,
            classification: s.classification,
            score: s.score,
            passed: s.passed,
            error: s.error,
            scored_at: s.scored_at,
          })),
        }
      : {}),
    ...(expand.metrics
      ? {
          metrics: {
            cost_usd: tally.cost.total,
            cost: tally.cost,
            scoring_cost_usd: tally.scoring_cost.total,
            wall_time_s: seconds(tally.wall_ms),
            retries: tally.retries,
          },
        }
      : {}),
    ...(expand.attempts
      ? {
          attempts: t.attempts.map((a) => ({
            attempt_number: a.attempt_number,
            run_id: a.run_id,
            state: a.state,
            started_at: a.started_at,
            finished_at: a.finished_at,
            run_time_s: seconds(a.run_time_ms),
            cost_usd: a.cost.total,
          })),
        }
      : {}),
    ...(expand.judge_runs
      ? {
          judge_runs: t.scores.flatMap((s) =>
            s.attempt_id && s.judge_run_id
              ? [{ scorer_uid: s.scorer_uid, attempt_id: s.attempt_id, judge_run_id: s.judge_run_id }]
              : [],
          ),
        }
      : {}),
  };
}
