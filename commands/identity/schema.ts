/** The agent identity body: every field of the hosted service's named agents. */
import { z } from 'zod';
import { boundedJson } from '../../src/http/schemas.js';
import { AGENT_TYPES, CREDENTIAL_STRATEGIES } from './events.js';
import { ownsKey } from '../../src/own-keys.js';

const KB = 1024;
const json = z.record(z.string(), z.unknown());

/** A free-form field: at most `maxBytes` of JSON, nested at most 64 levels, then of its `shape`. */
const jsonField = <T extends z.ZodType>(shape: T, maxBytes: number) => ({
  field: boundedJson({ maxBytes }, shape),
  /** An update may clear it with an empty string; the bounds come first, so a breach names the field. */
  clearable: boundedJson({ maxBytes }, z.union([shape, z.literal('')])),
});

const jsonFields = {
  harness: jsonField(json, 16 * KB),
  harness_auth_secrets: jsonField(z.record(z.string(), z.string().max(200)), 16 * KB),
  mcp_servers: jsonField(z.record(z.string(), json), 64 * KB),
  memory: jsonField(json, 64 * KB),
  inference_providers: jsonField(json, 16 * KB),
};
const isJsonField = (k: string): k is keyof typeof jsonFields => ownsKey(jsonFields, k);

const profileFields = {
  name: z.string().trim().min(1).max(200),
  agent_type: z.enum(AGENT_TYPES),
  description: z.string().max(2000),
  prompt: z.string().max(100_000),
  base_model: z.string().max(200),
  harness: jsonFields.harness.field,
  harness_auth_secrets: jsonFields.harness_auth_secrets.field,
  credential_strategy: z.enum(CREDENTIAL_STRATEGIES),
  default_runner_uid: z.string().max(200),
  environment_id: z
    .string()
    .max(22)
    .regex(/^[A-Za-z0-9]{22}$/, 'an environment ID is exactly 22 characters [A-Za-z0-9]'),
  worker_host: z.string().max(200),
  mcp_servers: jsonFields.mcp_servers.field,
  secrets: z.array(z.object({ name: z.string().min(1).max(200) }).strict()).max(100),
  skills: z.array(z.string().min(1).max(500)).max(100),
  memory: jsonFields.memory.field,
  inference_providers: jsonFields.inference_providers.field,
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
        (k === 'name' || k === 'agent_type'
          ? v
          : isJsonField(k)
            ? jsonFields[k].clearable
            : z.union([v, z.literal('')])
        ).nullish(),
      ]),
    ) as { [K in keyof Fields]: z.ZodOptional<z.ZodNullable<Fields[K]>> },
  )
  .strict();
