/** The body of POST /agent/runs (`RunAgentRequest`), with every documented limit. */
import { z } from 'zod';
import { boundedJson } from '../../src/http/schemas.js';

export const MAX_ATTACHMENTS = 5;
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;
const MAX_METADATA_KEYS = 20;
/** Room for every attachment at its largest, base64-encoded, beside a prompt of a million characters. */
export const RUN_REQUEST_BODY_LIMIT = MAX_ATTACHMENTS * Math.ceil((MAX_ATTACHMENT_BYTES * 4) / 3) + 8 * 1024 * 1024;

/**
 * A run's `config` as JSON: 64 KB besides `base_prompt` (100,000 characters on its own), so that
 * a page of runs stays small; nested at most 64 levels, like every free-form field.
 */
export const RUN_CONFIG_MAX_BYTES = 64 * 1024;
/** Room for the 20 keys and values `metadataSchema` allows, however escaped: the check before it walks the keys. */
const METADATA_MAX_BYTES = 32 * 1024;

const utf8Bytes = (s: string) => Buffer.byteLength(s, 'utf8');

export const metadataSchema = boundedJson(
  { maxBytes: METADATA_MAX_BYTES },
  z
    .record(
      z
        .string()
        .refine((k) => /^[a-zA-Z0-9._-]+$/.test(k) && utf8Bytes(k) <= 64, 'keys are 1-64 bytes of [a-zA-Z0-9._-]'),
      z
        .string()
        .refine((v) => utf8Bytes(v) <= 256 && !v.includes('\0'), 'values are at most 256 bytes of UTF-8 without NUL'),
    )
    .refine((m) => Object.keys(m).length <= MAX_METADATA_KEYS, `at most ${MAX_METADATA_KEYS} metadata keys`),
);

const skillSpec = z
  .string()
  .max(1000)
  .regex(/^[\w.-]+(\/[\w.-]+)?:[^\s]+$/, 'a skill is repo:name, repo:path, org/repo:name or org/repo:path');

const environmentId = z
  .string()
  .max(22)
  .regex(/^[A-Za-z0-9]{22}$/, 'an environment ID is exactly 22 characters [A-Za-z0-9]');

/** `AmbientAgentConfig`: bounded as a whole, then the known fields are checked; the rest is kept as given. */
export const agentConfigSchema = boundedJson(
  { maxBytes: RUN_CONFIG_MAX_BYTES, besides: ['base_prompt'] },
  z
    .looseObject({
      name: z.string().min(1).max(200).optional(),
      model_id: z.string().min(1).max(200).optional(),
      base_prompt: z.string().max(100_000).optional(),
      environment_id: environmentId.optional(),
      skill_spec: skillSpec.optional(),
      skills: z.array(skillSpec).max(50).optional(),
      idle_timeout_minutes: z.number().int().min(1).max(60).optional(),
      worker_host: z.string().min(1).max(200).optional(),
      computer_use_enabled: z.boolean().optional(),
      harness: z.looseObject({ type: z.enum(['oz', 'claude', 'gemini', 'codex']).optional() }).optional(),
      credential_strategy: z.enum(['EXECUTOR', 'CREATOR']).optional(),
    })
    .refine((c) => !(c.skill_spec && c.skills), {
      message: 'skill_spec and skills are mutually exclusive',
      path: ['skills'],
    }),
);

export const attachmentSchema = z
  .object({
    file_name: z.string().min(1).max(255),
    mime_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
    data: z.base64().max(Math.ceil((MAX_ATTACHMENT_BYTES * 4) / 3) + 4, 'an attachment is at most 10 MB'),
  })
  .strict();

export const runModeSchema = z.enum(['normal', 'plan', 'orchestrate']);

export const runRequestSchema = z
  .object({
    prompt: z.string().max(1_000_000).optional(),
    skill: skillSpec.optional(),
    config: agentConfigSchema.optional(),
    title: z.string().trim().min(1).max(500).optional(),
    team: z.boolean().optional(),
    agent_identity_uid: z.string().min(1).max(128).optional(),
    on_behalf_of: z.string().min(1).max(320).optional(),
    conversation_id: z.string().min(1).max(128).optional(),
    parent_run_id: z.string().min(1).max(128).optional(),
    attachments: z.array(attachmentSchema).max(MAX_ATTACHMENTS, `at most ${MAX_ATTACHMENTS} attachments`).optional(),
    interactive: z.boolean().default(false),
    mode: runModeSchema.default('normal'),
    metadata: metadataSchema.optional(),
  })
  .strict()
  .refine((r) => r.prompt?.trim() || r.skill || r.config?.skill_spec || r.config?.skills?.length || r.conversation_id, {
    message: 'give a prompt, a skill, or a conversation_id to continue',
    path: ['prompt'],
  });

export type RunRequest = z.infer<typeof runRequestSchema>;
