/**
 * Suites and their tasks as the API answers them, from the documents of their read model; also
 * the shapes a run shares with its suite (a configuration, a creator).
 */
import { z } from 'zod';
import { pageInfoSchema } from '../../src/http/schemas.js';
import type { Configuration } from './events.js';
import type { SuiteDoc, SuiteTaskDoc } from '../../projections/benchmark/benchmark-suites.js';

export const principal = z.object({
  type: z.enum(['user', 'service_account']),
  uid: z.string(),
  display_name: z.string().nullable().optional(),
  email: z.string().nullable().optional(),
});

export const creatorOf = (c: { type: string; uid: string }) => ({
  type: c.type === 'user' ? ('user' as const) : ('service_account' as const),
  uid: c.uid,
});

export const configurationResource = z.object({
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

export const toConfiguration = (c: Configuration) => ({
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
