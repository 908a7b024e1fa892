/**
 * The environment as the API takes it (`CloudEnvironmentConfig`) and answers it (`CloudEnvironment`;
 * the answers are made in projections/environment/environment-answers.ts).
 */
import { z } from 'zod';

const repo = z.object({ owner: z.string().trim().min(1).max(100), repo: z.string().trim().min(1).max(100) }).strict();

const config = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullable(),
  docker_image: z
    .string()
    .min(1)
    .max(500)
    .refine((i) => !/alpine/i.test(i), 'glibc images only: Alpine images are not supported'),
  github_repos: z.array(repo).max(50),
  setup_commands: z.array(z.string().min(1).max(10_000)).max(100),
  providers: z
    .object({
      gcp: z
        .object({
          project_number: z.string().min(1).max(100),
          workload_identity_federation_pool_id: z.string().min(1).max(200),
          workload_identity_federation_provider_id: z.string().min(1).max(200),
          service_account_email: z.string().max(320).optional(),
        })
        .strict()
        .optional(),
      aws: z
        .object({ role_arn: z.string().min(1).max(2048) })
        .strict()
        .optional(),
    })
    .strict(),
  failure_session_retention_minutes: z.number().int().min(1).max(60).nullable(),
};

export const createEnvironmentBody = z
  .object({
    name: config.name,
    description: config.description.optional(),
    docker_image: config.docker_image.optional(),
    github_repos: config.github_repos.default([]),
    setup_commands: config.setup_commands.default([]),
    providers: config.providers.optional(),
    failure_session_retention_minutes: config.failure_session_retention_minutes.optional(),
  })
  .strict();

/** PUT is partial: an omitted field keeps its value, null clears an optional one. */
export const updateEnvironmentBody = z
  .object({
    name: config.name.optional(),
    description: config.description.optional(),
    docker_image: config.docker_image.nullable().optional(),
    github_repos: config.github_repos.optional(),
    setup_commands: config.setup_commands.optional(),
    providers: config.providers.nullable().optional(),
    failure_session_retention_minutes: config.failure_session_retention_minutes.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one field to change' });

export const environmentParams = z.object({
  environment_id: z
    .string()
    .length(22)
    .regex(/^[A-Za-z0-9]{22}$/, 'an environment ID is exactly 22 characters [A-Za-z0-9]'),
});

const profile = z.object({ type: z.enum(['user', 'service_account']), uid: z.string() });

export const environmentResource = z.object({
  uid: z.string(),
  config: z.object({
    name: z.string(),
    description: z.string().nullable().optional(),
    docker_image: z.string().optional(),
    github_repos: z.array(z.object({ owner: z.string(), repo: z.string() })),
    setup_commands: z.array(z.string()),
    providers: z.record(z.string(), z.unknown()).optional(),
    failure_session_retention_minutes: z.number().nullable().optional(),
  }),
  last_updated: z.string(),
  last_task_run_timestamp: z.string().optional(),
  last_task_created: z
    .object({
      id: z.string(),
      title: z.string(),
      state: z.string(),
      created_at: z.string(),
      updated_at: z.string(),
      started_at: z.string().nullable(),
    })
    .optional(),
  setup_failed: z.boolean(),
  scope: z.object({ type: z.literal('Team'), uid: z.string() }),
  creator: profile,
  last_editor: profile,
});
