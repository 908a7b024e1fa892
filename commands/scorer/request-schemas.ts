/**
 * What the scorer routes take: the bodies of a scorer (create, PATCH) with every bound they
 * enforce, the path parameters, and how a body's scope and judge configuration become fields.
 */
import { z } from 'zod';
import { boundedJson } from '../../src/http/schemas.js';
import type { JudgeConfig, ScopeAgent } from './events.js';

// ---- bounds ------------------------------------------------------------------------------------

const MAX_CLASSIFICATIONS = 20;
const MAX_SCOPE_AGENTS = 100;
const MAX_RUBRIC = 50_000;
/** A judge's reasoning is kept up to this many bytes of UTF-8 (the hosted service's 8 KB). */
export const MAX_REASON_BYTES = 8 * 1024;
const MAX_MCP_SERVERS = 20;
/** As an agent's `mcp_servers` (commands/identity/schema.ts). */
const MAX_MCP_SERVERS_BYTES = 64 * 1024;
const MAX_MCP_SERVERS_DEPTH = 16;

export const uuid = z
  .string()
  .trim()
  .max(64)
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'a UUID')
  .refine((u) => !/^[0-]+$/.test(u), 'a nonzero UUID')
  .transform((u) => u.toLowerCase());

// ---- bodies ------------------------------------------------------------------------------------

const classificationBody = z
  .object({
    value: z.string().trim().min(1).max(100),
    score: z.number().min(0).max(1),
    description: z.string().max(2000).nullish(),
  })
  .strict();

const agentRef = z
  .object({ uid: z.string().trim().min(1).max(128), include_descendants: z.boolean().optional() })
  .strict();

const judgeConfigBody = z
  .object({
    default_runner_uid: z.string().trim().min(1).max(128).nullish(),
    mcp_servers: boundedJson(
      { maxBytes: MAX_MCP_SERVERS_BYTES, maxDepth: MAX_MCP_SERVERS_DEPTH },
      z
        .record(z.string().min(1).max(100), z.record(z.string(), z.unknown()))
        .refine((m) => Object.keys(m).length <= MAX_MCP_SERVERS, `at most ${MAX_MCP_SERVERS} MCP servers`),
    ).nullish(),
    secrets: z
      .array(z.object({ name: z.string().trim().min(1).max(200) }).strict())
      .max(50)
      .nullish(),
  })
  .strict();

/** Percent with two decimals: more are rounded, as the hosted service does. */
const samplingRate = z
  .number()
  .min(0)
  .max(100)
  .transform((r) => Math.round(r * 100) / 100);

const fields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullish(),
  scoring_prompt: z.string().trim().min(1).max(MAX_RUBRIC),
  model_id: z.string().trim().min(1).max(200),
  threshold: z.number().min(0).max(1),
  allowed_classifications: z.array(classificationBody).min(1).max(MAX_CLASSIFICATIONS),
  scope_mode: z.enum(['all_agents', 'selected_agents']),
  agents: z.array(agentRef).max(MAX_SCOPE_AGENTS),
  agent_uids: z.array(z.string().trim().min(1).max(128)).max(MAX_SCOPE_AGENTS),
  sampling_rate: samplingRate.nullish(),
  agent_config: judgeConfigBody,
  self_improvement_enabled: z.boolean(),
  failed_run_threshold: z.int().min(1).max(50),
};

const oneScopeForm = (b: { agents?: unknown[] | undefined; agent_uids?: unknown[] | undefined }) =>
  !(b.agents?.length && b.agent_uids?.length);
const oneScopeFormError = { message: 'give agents or agent_uids, not both', path: ['agent_uids'] };

export const createScorerBody = z
  .object({
    name: fields.name,
    description: fields.description,
    scoring_prompt: fields.scoring_prompt,
    model_id: fields.model_id,
    threshold: fields.threshold,
    allowed_classifications: fields.allowed_classifications,
    scope_mode: fields.scope_mode,
    agents: fields.agents.optional(),
    agent_uids: fields.agent_uids.optional(),
    sampling_rate: fields.sampling_rate,
    agent_config: fields.agent_config.optional(),
    self_improvement_enabled: fields.self_improvement_enabled.optional(),
    failed_run_threshold: fields.failed_run_threshold.optional(),
  })
  .strict()
  .refine(oneScopeForm, oneScopeFormError);

/** The hosted SDK's form, POST /factory/scorers: the factory in the body. */
export const createScorerBodyWithFactory = createScorerBody.safeExtend({ factory_uid: z.string().min(1).max(128) });

export const patchScorerBody = z
  .object({
    name: fields.name.optional(),
    description: fields.description,
    scoring_prompt: fields.scoring_prompt.optional(),
    model_id: fields.model_id.optional(),
    threshold: fields.threshold.optional(),
    allowed_classifications: fields.allowed_classifications.optional(),
    scope_mode: fields.scope_mode.optional(),
    agents: fields.agents.optional(),
    agent_uids: fields.agent_uids.optional(),
    sampling_rate: fields.sampling_rate,
    agent_config: fields.agent_config.optional(),
    self_improvement_enabled: fields.self_improvement_enabled.optional(),
    failed_run_threshold: fields.failed_run_threshold.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one field to change' })
  .refine(oneScopeForm, oneScopeFormError);

export type CreateScorerBody = z.infer<typeof createScorerBody>;
export type PatchScorerBody = z.infer<typeof patchScorerBody>;

/** The scope agents a body names, in either form (`agent_uids` is `include_descendants: false`). */
export const scopeAgentsOf = (b: Pick<CreateScorerBody, 'agents' | 'agent_uids'>): ScopeAgent[] | undefined =>
  b.agents?.length
    ? b.agents.map((a) => ({ uid: a.uid, include_descendants: a.include_descendants ?? false }))
    : b.agent_uids?.length
      ? b.agent_uids.map((uid) => ({ uid, include_descendants: false }))
      : b.agents || b.agent_uids
        ? []
        : undefined;

export const judgeConfigOf = (c: z.infer<typeof judgeConfigBody> | undefined): JudgeConfig => ({
  default_runner_uid: c?.default_runner_uid ?? null,
  mcp_servers: (c?.mcp_servers as JudgeConfig['mcp_servers']) ?? null,
  secrets: c?.secrets ?? null,
});

export const scorerParams = z.object({
  factory_uid: z.string().min(1).max(128),
  scorer_uid: z.string().min(1).max(128),
});
