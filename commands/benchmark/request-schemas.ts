/**
 * What the benchmark routes take: the bodies of suites, tasks, configurations and launches, each
 * with its bounds, and the path parameters.
 */
import { z } from 'zod';
import { boundedJson } from '../../src/http/schemas.js';
import type { Configuration } from './events.js';

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
