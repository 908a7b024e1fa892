/** The agent identity as the API answers it. */
import { z } from 'zod';
import type { IdentityDoc } from '../../projections/identity/identities.js';
import { AGENT_TYPES, CREDENTIAL_STRATEGIES } from './events.js';

const json = z.record(z.string(), z.unknown());

/**
 * The hosted service's named agent. The fields it always shows are present (null, or their
 * default, when never set); the others only once set. A field cleared with an empty string is null.
 */
export const identityResource = z.object({
  uid: z.string(),
  team_uid: z.string(),
  name: z.string(),
  agent_type: z.enum(AGENT_TYPES),
  factory_uid: z.string().nullable().describe('The factory the agent works for; null for an agent of the team'),
  description: z.string().nullable(),
  prompt: z.string().nullable().describe('The base prompt'),
  base_model: z.string().nullable(),
  environment_id: z.string().nullable(),
  worker_host: z.string().nullable(),
  credential_strategy: z.enum(CREDENTIAL_STRATEGIES).nullable(),
  skills: z.array(z.string()).nullable().describe('Skill specs, owner/repo:path/to/SKILL.md'),
  secrets: z
    .array(z.object({ name: z.string() }))
    .nullable()
    .describe('Names of team secrets the agent gets'),
  memory: json.nullable(),
  harness: json.nullable().optional(),
  harness_auth_secrets: z.record(z.string(), z.string()).nullable().optional(),
  default_runner_uid: z.string().nullable().optional(),
  mcp_servers: z.record(z.string(), json).nullable().optional(),
  inference_providers: json.nullable().optional(),
  on_behalf_of_enabled: z.boolean().nullable().optional(),
  available: z.boolean().describe('Within the plan limit (always true here)'),
  created_at: z.string(),
  updated_at: z.string(),
});

export const identityParams = z.object({ agent_uid: z.string().min(1).max(128) });

/** The hosted service's named-agent shape, with its defaults for fields never set. */
export const toIdentityResource = (doc: IdentityDoc): z.infer<typeof identityResource> => ({
  description: null,
  prompt: null,
  base_model: null,
  environment_id: null,
  worker_host: null,
  credential_strategy: null,
  skills: [],
  secrets: [],
  memory: { attached_stores: [], auto_memory: { enabled: true } },
  ...doc,
  available: true,
});
