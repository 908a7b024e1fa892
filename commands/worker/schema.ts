/** Bodies and parameters of the worker API, with every limit it enforces; its answers are in answers.ts. */
import { z } from 'zod';
import { LONGEST_LONG_POLL_SECONDS } from '../../src/config.js';
import { booleanParam, boundedJson, uidParam } from '../../src/http/schemas.js';
import { ACTION_CATEGORIES, FINISH_STATES } from '../run/events.js';

/** The idle timeout of every connection is above it (src/config.ts). */
const MAX_WAIT_SECONDS = LONGEST_LONG_POLL_SECONDS;
const MAX_CAPABILITIES = 50;
const MAX_HEARTBEAT_RUNS = 100;
const MAX_ACKS = 1000;
const MAX_CONTENT_BLOCKS = 200;
/** How many bytes of JSON a worker may report in each free-form field (each nests at most 64 levels). */
export const REPORT_BOUNDS = {
  /** A timeline entry's `detail`. */
  timelineDetail: 64 * 1024,
  /** An action's `input`, an action result's `output`, an event block's `data`. */
  blockJson: 64 * 1024,
  /** A message's `content`, every block together: room for the reference worker's batches (64K characters and a line) escaped. */
  messageContent: 512 * 1024,
  /** An external reference's `metadata`: room for its 20 keys and values. */
  artifactMetadata: 32 * 1024,
  /** A usage report. */
  usage: 64 * 1024,
} as const;

/** Worker ids are chosen by the worker (stable names) or by the server (UUIDs). */
const workerId = z
  .string()
  .max(128)
  .regex(/^[A-Za-z0-9._:-]{1,128}$/, 'a worker id is 1-128 characters of [A-Za-z0-9._:-]');

export const workerParams = z.object({ worker_id: workerId });
export const runParams = z.object({ worker_id: workerId, run_id: uidParam });

/** Every report names the execution it comes from; only the one holding the run is heard. Other headers stay. */
export const executionHeader = z.looseObject({ 'x-execution-id': z.string().min(1).max(128) });

export const announceBody = z
  .object({
    host: z.string().trim().min(1).max(255),
    capabilities: z.array(z.string().min(1).max(64)).max(MAX_CAPABILITIES).default([]),
    worker_id: workerId.optional(),
  })
  .strict();

export const heartbeatBody = z
  .object({
    runs: z.array(uidParam).max(MAX_HEARTBEAT_RUNS).default([]),
    /** Signal ids the worker has handled; they are not sent again. */
    acks: z.array(z.string().min(1).max(200)).max(MAX_ACKS).default([]),
  })
  .strict();

const repoName = z
  .string()
  .max(201)
  .regex(/^[\w.-]{1,100}\/[\w.-]{1,100}$/, 'owner/repo');

/** The skills a worker found in the repositories it serves; each report replaces those repositories' skills. */
export const skillsBody = z
  .object({
    repos: z.array(repoName).max(100),
    skills: z
      .array(
        z
          .object({
            repo: repoName,
            path: z.string().min(1).max(1000),
            name: z.string().max(200),
            description: z.string().max(2000),
            base_prompt: z.string().max(100_000),
            error: z.string().min(1).max(2000).nullable(),
          })
          .strict(),
      )
      .max(1000),
  })
  .strict()
  .refine((b) => b.skills.every((s) => b.repos.includes(s.repo)), {
    message: 'every skill belongs to one of the repos reported',
    path: ['skills'],
  });

export const claimQuery = z
  .object({ wait_seconds: z.coerce.number().int().min(0).max(MAX_WAIT_SECONDS).default(0) })
  .strict();

export const timelineBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    detail: boundedJson({ maxBytes: REPORT_BOUNDS.timelineDetail }, z.record(z.string(), z.unknown())).default({}),
  })
  .strict();

// The normalized conversation's content blocks (reference notes §2.9).
const actionCategory = z.enum(ACTION_CATEGORIES);
const name = z.string().min(1).max(200);

/** Free-form parts as `json` has them: bounded in requests, as recorded in answers (a pipe cannot encode). */
export const contentBlockWith = <J extends z.ZodType>(json: J) =>
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('text'), text: z.string().max(200_000) }).strict(),
    z
      .object({
        type: z.literal('action'),
        id: z.string().min(1).max(128),
        category: actionCategory,
        name,
        input: json,
      })
      .strict(),
    z
      .object({
        type: z.literal('action_result'),
        action_id: z.string().min(1).max(128),
        category: actionCategory,
        name,
        state: z.enum(['running', 'completed', 'failed', 'denied']),
        output: json,
      })
      .strict(),
    z.object({ type: z.literal('event'), name, data: json }).strict(),
  ]);
const contentBlock = contentBlockWith(boundedJson({ maxBytes: REPORT_BOUNDS.blockJson }).optional());

export const messageBody = z
  .object({
    message_id: z.string().min(1).max(128).optional(),
    step_id: z.string().min(1).max(128).nullable().optional(),
    parent_step_id: z.string().min(1).max(128).nullable().optional(),
    role: z.enum(['user', 'assistant', 'tool', 'system']),
    // The size of all blocks together; the depth is each block's (only its free parts nest), so a breach names it.
    content: boundedJson(
      { maxBytes: REPORT_BOUNDS.messageContent, maxDepth: Number.POSITIVE_INFINITY },
      z.array(contentBlock).min(1).max(MAX_CONTENT_BLOCKS),
    ),
  })
  .strict();

const httpUrl = z.url({ protocol: /^https?$/ }).max(2048);
const visibility = { public: z.boolean().default(false) };

/** Artifacts reported as JSON; files and screenshots are uploaded raw (PUT .../files). */
export const artifactBody = z.discriminatedUnion('artifact_type', [
  z
    .object({
      artifact_type: z.literal('PULL_REQUEST'),
      url: httpUrl,
      // The branch may be unknown to the worker: an empty string says so and keeps SDK types.
      branch: z.string().max(255).default(''),
      status: z
        .string()
        .max(32)
        .regex(/^[A-Za-z_]{1,32}$/)
        .optional(),
      title: z.string().max(500).optional(),
      ...visibility,
    })
    .strict(),
  z
    .object({
      artifact_type: z.literal('PLAN'),
      title: z.string().max(500).optional(),
      content: z.string().max(256 * 1024),
      ...visibility,
    })
    .strict(),
  z
    .object({
      artifact_type: z.literal('EXTERNAL_REFERENCE'),
      reference_type: z
        .string()
        .max(64)
        .regex(/^[a-z0-9_]{1,64}$/, 'a reference type is 1-64 characters of [a-z0-9_], like linear_issue'),
      url: httpUrl,
      title: z.string().max(500).optional(),
      metadata: boundedJson(
        { maxBytes: REPORT_BOUNDS.artifactMetadata },
        z
          .record(z.string().max(64), z.union([z.string().max(1024), z.number(), z.boolean(), z.null()]))
          .refine((m) => Object.keys(m).length <= 20, 'at most 20 metadata keys'),
      ).optional(),
      ...visibility,
    })
    .strict(),
]);

const question = z
  .object({
    id: z
      .string()
      .max(64)
      .regex(/^[A-Za-z0-9._:-]{1,64}$/, '1-64 characters of [A-Za-z0-9._:-]')
      .optional(),
    question: z.string().trim().min(1).max(4000),
    options: z.array(z.string().trim().min(1).max(500)).max(20).default([]),
    type: z.enum(['single_select', 'multi_select']).default('single_select'),
    recommended_option_index: z.int().min(0).max(19).optional(),
  })
  .strict()
  .refine((q) => q.recommended_option_index === undefined || q.recommended_option_index < q.options.length, {
    message: 'recommended_option_index must name one of the options',
    path: ['recommended_option_index'],
  });

/** A question the run asks its requester: it waits for a follow-up, which answers it. */
export const questionBody = z
  .object({
    /** Names this ask, so that a retried report asks once; the server chooses one when absent. */
    ask_id: z
      .string()
      .max(128)
      .regex(/^[A-Za-z0-9._:-]{1,128}$/, '1-128 characters of [A-Za-z0-9._:-]')
      .optional(),
    questions: z.array(question).min(1).max(10),
  })
  .strict();

const fileName = z
  .string()
  .min(1)
  .max(255)
  .refine((n) => !/[/\\\0]/.test(n) && n !== '.' && n !== '..', 'a file name, not a path');
const mimeType = z
  .string()
  .regex(/^[\w.+-]+\/[\w.+-]+$/, 'a MIME type such as text/plain')
  .max(127);

export const fileQuery = z
  .object({
    filename: fileName,
    mime_type: mimeType.default('application/octet-stream'),
    artifact_type: z.enum(['FILE', 'SCREENSHOT']).default('FILE'),
    /** Where the file was in the worker's working directory; never shown anonymously. */
    filepath: z.string().min(1).max(1024).optional(),
    title: z.string().max(500).optional(),
    description: z.string().max(2000).optional(),
    public: booleanParam,
  })
  .strict()
  .refine((q) => q.artifact_type === 'FILE' || /^image\/(png|jpeg|gif|webp)$/.test(q.mime_type), {
    message: 'a screenshot is image/png, image/jpeg, image/gif or image/webp',
    path: ['mime_type'],
  });

export const handoffQuery = z
  .object({ filename: fileName, mime_type: mimeType.default('application/octet-stream') })
  .strict();

// `request_usage` of RunItem (reference notes §2.5): a cumulative snapshot, replaced by the next.
const money = z.number().finite().nonnegative();
const count = z.number().int().nonnegative();
const costUsd = z
  .object({
    input_cost_usd: money,
    input_cache_read_cost_usd: money,
    input_cache_write_cost_usd: money,
    output_cost_usd: money,
  })
  .partial()
  .strict();
const inferenceUsage = z
  .object({
    cost_usd: costUsd,
    token_count: z
      .object({ input: count, input_cache_read: count, input_cache_write: count, output: count })
      .partial()
      .strict(),
    web_search_count: count,
    web_search_cost_usd: money,
  })
  .partial()
  .strict();
const byModel = z
  .record(z.string().min(1).max(200), inferenceUsage)
  .refine((m) => Object.keys(m).length <= 50, 'at most 50 models');

/** A usage report as the worker sends it and as answers show it. */
export const usage = z
  .object({
    inference_cost: money,
    compute_cost: money,
    platform_cost: money,
    inference_cost_usd: money,
    compute_cost_usd: money,
    platform_cost_usd: money,
    total_tokens: count,
    inference_cost_breakdown_usd: costUsd,
    model_token_usage: z
      .array(
        z
          .object({
            model_id: z.string().min(1).max(200),
            usage_type: z.enum(['warp', 'byok', 'custom_endpoint']).default('warp'),
            total_tokens: count,
            tokens_by_category: z.record(z.string().min(1).max(64), count).optional(),
          })
          .strict(),
      )
      .max(50),
    usage_by_category: z
      .record(
        z.string().min(1).max(64),
        z
          .object({
            platform_usage_usd: money,
            direct_api_inference_usage: byModel,
            byok_inference_usage: byModel,
            custom_endpoint_inference_usage: byModel,
          })
          .partial()
          .strict(),
      )
      .refine((m) => Object.keys(m).length <= 20, 'at most 20 categories'),
  })
  .partial()
  .strict();

/** The body of a usage report: bounded as JSON first, then checked field by field. */
export const usageBody = boundedJson({ maxBytes: REPORT_BOUNDS.usage }, usage);

export const finishBody = z
  .object({
    state: z.enum(FINISH_STATES),
    status_message: z
      .union([
        z.string().min(1).max(4000),
        z
          .object({
            message: z.string().min(1).max(4000),
            error_code: z
              .string()
              .max(64)
              .regex(/^[a-z][a-z0-9_]{0,63}$/)
              .nullable()
              .optional(),
            retryable: z.boolean().optional(),
            session_debug_until: z.iso.datetime({ offset: true }).max(64).nullable().optional(),
          })
          .strict(),
      ])
      .optional(),
  })
  .strict();
