/** Bodies and parameters of the worker API, with every limit it enforces. */
import { z } from 'zod';
import { LONGEST_LONG_POLL_SECONDS } from '../../src/config.js';
import { booleanParam, uidParam } from '../../src/http/schemas.js';
import { FINISH_STATES } from '../run/events.js';

/** The idle timeout of every connection is above it (src/config.ts). */
const MAX_WAIT_SECONDS = LONGEST_LONG_POLL_SECONDS;
const MAX_CAPABILITIES = 50;
const MAX_HEARTBEAT_RUNS = 100;
const MAX_ACKS = 1000;
const MAX_CONTENT_BLOCKS = 200;

/** Worker ids are chosen by the worker (stable names) or by the server (UUIDs). */
const workerId = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'a worker id is 1-128 characters of [A-Za-z0-9._:-]');

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

export const claimQuery = z
  .object({ wait_seconds: z.coerce.number().int().min(0).max(MAX_WAIT_SECONDS).default(0) })
  .strict();

export const timelineBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    detail: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

// The normalized conversation's content blocks (reference notes §2.9).
const actionCategory = z.enum([
  'command',
  'files',
  'search',
  'integration',
  'documents',
  'computer',
  'review',
  'skill',
]);
const name = z.string().min(1).max(200);

const contentBlock = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string().max(200_000) }).strict(),
  z
    .object({
      type: z.literal('action'),
      id: z.string().min(1).max(128),
      category: actionCategory,
      name,
      input: z.unknown(),
    })
    .strict(),
  z
    .object({
      type: z.literal('action_result'),
      action_id: z.string().min(1).max(128),
      category: actionCategory,
      name,
      state: z.enum(['running', 'completed', 'failed', 'denied']),
      output: z.unknown(),
    })
    .strict(),
  z.object({ type: z.literal('event'), name, data: z.unknown() }).strict(),
]);

export const messageBody = z
  .object({
    message_id: z.string().min(1).max(128).optional(),
    step_id: z.string().min(1).max(128).nullable().optional(),
    parent_step_id: z.string().min(1).max(128).nullable().optional(),
    role: z.enum(['user', 'assistant', 'tool', 'system']),
    content: z.array(contentBlock).min(1).max(MAX_CONTENT_BLOCKS),
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
        .regex(/^[a-z0-9_]{1,64}$/, 'a reference type is 1-64 characters of [a-z0-9_], like linear_issue'),
      url: httpUrl,
      title: z.string().max(500).optional(),
      metadata: z
        .record(z.string().max(64), z.union([z.string().max(1024), z.number(), z.boolean(), z.null()]))
        .refine((m) => Object.keys(m).length <= 20, 'at most 20 metadata keys')
        .optional(),
      ...visibility,
    })
    .strict(),
]);

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

export const usageBody = z
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
              .regex(/^[a-z][a-z0-9_]{0,63}$/)
              .nullable()
              .optional(),
            retryable: z.boolean().optional(),
            session_debug_until: z.iso.datetime({ offset: true }).nullable().optional(),
          })
          .strict(),
      ])
      .optional(),
  })
  .strict();
