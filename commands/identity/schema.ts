/** The agent identity body: every field of the hosted service's named agents. */
import { z } from 'zod';
import { AGENT_TYPES, CREDENTIAL_STRATEGIES } from './events.js';

const json = z.record(z.string(), z.unknown());

const profileFields = {
  name: z.string().trim().min(1).max(200),
  agent_type: z.enum(AGENT_TYPES),
  description: z.string().max(2000),
  prompt: z.string().max(100_000),
  base_model: z.string().max(200),
  harness: json,
  harness_auth_secrets: z.record(z.string(), z.string().max(200)),
  credential_strategy: z.enum(CREDENTIAL_STRATEGIES),
  default_runner_uid: z.string().max(200),
  environment_id: z.string().regex(/^[A-Za-z0-9]{22}$/, 'an environment ID is exactly 22 characters [A-Za-z0-9]'),
  worker_host: z.string().max(200),
  mcp_servers: z.record(z.string(), json),
  secrets: z.array(z.object({ name: z.string().min(1).max(200) }).strict()).max(100),
  skills: z.array(z.string().min(1).max(500)).max(100),
  memory: json,
  inference_providers: json,
  factory_uid: z.string().min(1).max(128),
  on_behalf_of_enabled: z.boolean(),
};

type Fields = typeof profileFields;

export const createIdentityBody = z
  .object({
    ...(Object.fromEntries(Object.entries(profileFields).map(([k, v]) => [k, v.nullish()])) as {
      [K in keyof Fields]: z.ZodOptional<z.ZodNullable<Fields[K]>>;
    }),
    name: profileFields.name,
    agent_type: profileFields.agent_type.default('CUSTOM'),
  })
  .strict();

/** Update: an omitted or null field stays as it is; an empty string or list clears it. */
export const updateIdentityBody = z
  .object(
    Object.fromEntries(
      Object.entries(profileFields).map(([k, v]) => [
        k,
        (k === 'name' || k === 'agent_type' ? v : z.union([v, z.literal('')])).nullish(),
      ]),
    ) as { [K in keyof Fields]: z.ZodOptional<z.ZodNullable<Fields[K]>> },
  )
  .strict();
