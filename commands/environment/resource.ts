/** The environment as the API takes it (`CloudEnvironmentConfig`) and answers it (`CloudEnvironment`). */
import { z } from 'zod';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { type EnvironmentDoc, environmentsProjection } from '../../projections/environment/environments.js';
import { runsProjection } from '../../projections/run/runs.js';

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

type LastRun = NonNullable<z.infer<typeof environmentResource>['last_task_created']>;

const toEnvironmentResource = (
  doc: EnvironmentDoc,
  lastRun: LastRun | undefined,
): z.infer<typeof environmentResource> => ({
  uid: doc.uid,
  config: doc.config,
  last_updated: doc.last_updated,
  ...(doc.last_task_run_timestamp ? { last_task_run_timestamp: doc.last_task_run_timestamp } : {}),
  ...(lastRun ? { last_task_created: lastRun } : {}),
  setup_failed: false,
  scope: { type: 'Team', uid: doc.team_uid },
  creator: doc.creator,
  last_editor: doc.last_editor,
});

/** Environments as answers: the newest run of each resolved from the runs read model, one read a page. */
export function environmentAnswers(rt: Runtime) {
  const environments = rt.readModel(environmentsProjection);
  const runs = rt.readModel(runsProjection);
  const many = async (docs: readonly EnvironmentDoc[]) => {
    const found = await runs.getMany(docs.flatMap((d) => (d.last_run_id ? [d.last_run_id] : [])));
    return docs.map((d) => {
      const run = d.last_run_id ? found.get(d.last_run_id) : undefined;
      const last = run && {
        id: run.run_id,
        title: run.title,
        state: run.state,
        created_at: run.created_at,
        updated_at: run.updated_at,
        started_at: run.started_at,
      };
      return toEnvironmentResource(d, last);
    });
  };
  return {
    many,
    async one(id: string) {
      const doc = await environments.get(id);
      if (!doc) throw new NotFound('environment', id);
      return (await many([doc]))[0]!;
    },
  };
}
