/** Bodies, parameters and answers of the worker API, with every limit it enforces. */
import { z } from 'zod';
import { LONGEST_LONG_POLL_SECONDS } from '../../src/config.js';
import { booleanParam, boundedJson, uidParam } from '../../src/http/schemas.js';
import { ACTION_CATEGORIES, FINISH_STATES, RUN_SOURCES, RUN_STATES } from '../run/events.js';
import { runModeSchema } from '../run/public.js';

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
const contentBlockWith = <J extends z.ZodType>(json: J) =>
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

export const questionAnswer = z.object({
  run_id: z.string(),
  ask_id: z.string(),
  questions: z.array(
    z.object({
      id: z.string(),
      question: z.string(),
      options: z.array(z.string()),
      type: z.enum(['single_select', 'multi_select']),
      recommended_option_index: z.int().optional(),
    }),
  ),
});

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
const usage = z
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

// ---- answers -------------------------------------------------------------------------------

/** The timings a worker keeps to: in the answers to announce and heartbeat. */
const timings = {
  heartbeat_interval_seconds: z.number().describe('Heartbeat this often'),
  lease_seconds: z.number().describe('A run handed to the worker goes back to the queue unless claimed within this'),
  max_missed_heartbeats: z.int().describe('A worker that misses this many heartbeats in a row is gone'),
};

export const announced = z.object({
  worker_id: z.string().describe('The given worker_id, else one the server chose: use it in every later call'),
  ...timings,
});

/** A file of the run (attached to its prompt or to a follow-up), with a download link. */
const preparedAttachment = z.object({
  attachment_id: z.string(),
  file_name: z.string(),
  mime_type: z.string(),
  size_bytes: z.int().nonnegative(),
  download_url: z.string().describe('A signed link to the file, no credential needed, valid until expires_at'),
  expires_at: z.string(),
});

export const assignmentSchema = z
  .object({
    run_id: z.string(),
    execution_id: z.string().describe('This execution of the run: every report on the run names it in X-Execution-Id'),
    worker_id: z.string(),
    state: z.enum(RUN_STATES),
    lease_expires_at: z
      .string()
      .nullable()
      .describe('A PENDING run goes back to the queue at this moment unless claimed; null once claimed'),
    title: z.string(),
    source: z.enum(RUN_SOURCES).describe('What started the run: RUN_SCORER runs are judges, which report a judgement'),
    prompt: z.string().describe('What this execution is to do: the prompt, or the follow-up that resumed the run'),
    mode: runModeSchema,
    resumed: z.boolean().describe('True when this execution continues an ended run (a follow-up started it)'),
    conversation_id: z.string(),
    parent_run_id: z.string().nullable(),
    root_run_id: z.string(),
    skill_spec: z.string().nullable(),
    config: z.record(z.string(), z.unknown()).nullable().describe('The resolved agent configuration of the run'),
    environment_id: z.string().nullable(),
    interactive: z.boolean(),
    metadata: z.record(z.string(), z.string()),
    attachments: z.array(preparedAttachment).describe("The files of this execution's prompt"),
  })
  .describe('A run handed to a worker: everything it needs to execute it');

/** A signal's stop causes (`cancel`). */
const stopCause = z.enum(['cancelled', 'lease_expired', 'worker_lost', 'not_held']);

const signalId = z.string().describe('Acknowledge it (`acks` of the next heartbeat) and it is not sent again');

const workerSignal = z.discriminatedUnion('type', [
  z.object({
    signal_id: signalId,
    type: z.literal('followup'),
    run_id: z.string(),
    execution_id: z.string(),
    message: z.string(),
    mode: runModeSchema.nullable().describe("null keeps the run's mode"),
    attachments: z.array(preparedAttachment),
  }),
  z.object({ signal_id: signalId, type: z.literal('interrupt'), run_id: z.string(), execution_id: z.string() }),
  z.object({
    signal_id: signalId,
    type: z.literal('cancel').describe('Stop the execution'),
    run_id: z.string(),
    execution_id: z.string().nullable().describe('null for a run this worker runs without holding it (`not_held`)'),
    cause: stopCause,
    reason: z.string(),
  }),
]);

export type WorkerSignal = z.infer<typeof workerSignal>;

export const heartbeatAnswer = z.object({
  signals: z.array(workerSignal).describe('What the worker must act on, for the runs it holds'),
  ...timings,
});

export const claimAnswer = z.object({ run: assignmentSchema });

export const startAnswer = z.object({ run_id: z.string(), state: z.literal('INPROGRESS') });

export const timelineAnswer = z.object({
  run_id: z.string(),
  name: z.string(),
  detail: z.record(z.string(), z.unknown()),
});

export const messageAnswer = z.object({
  run_id: z.string(),
  message_id: z.string().describe('The given message_id, else one the server chose'),
  step_id: z.string().nullable(),
  parent_step_id: z.string().nullable(),
  role: messageBody.shape.role,
  content: z.array(contentBlockWith(z.unknown().optional())),
});

const artifactUid = z.string();
const isPublic = z.boolean().describe('Public artifacts can be read without a credential');

/** An artifact reported as JSON, as recorded. */
export const reportedArtifact = z.discriminatedUnion('artifact_type', [
  z.object({
    artifact_uid: artifactUid,
    artifact_type: z.literal('PULL_REQUEST'),
    url: z.string(),
    branch: z.string().describe('Empty when the worker did not know it'),
    status: z.string().optional(),
    title: z.string().optional(),
    public: isPublic,
  }),
  z.object({
    artifact_uid: artifactUid,
    artifact_type: z.literal('PLAN'),
    title: z.string().optional(),
    content: z.string(),
    public: isPublic,
    document_uid: z.string().describe('The plan document: its artifact_uid'),
  }),
  z.object({
    artifact_uid: artifactUid,
    artifact_type: z.literal('EXTERNAL_REFERENCE'),
    reference_type: z.string(),
    url: z.string(),
    title: z.string().optional(),
    metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
    public: isPublic,
  }),
]);

/** A file or screenshot uploaded raw, as recorded. */
export const uploadedArtifact = z.object({
  artifact_uid: artifactUid,
  artifact_type: z.enum(['FILE', 'SCREENSHOT']),
  public: isPublic,
  filename: z.string(),
  filepath: z.string().describe('Where the file was in the working directory (the file name when not given)'),
  mime_type: z.string(),
  size_bytes: z.int().nonnegative(),
  title: z.string().optional(),
  description: z.string().optional(),
});

export const usageAnswer = z.object({
  run_id: z.string(),
  usage: usage.describe("The run's usage now: this report replaces the one before"),
});

export const handoffAnswer = z.object({
  run_id: z.string(),
  attachment_id: z.string(),
  file_name: z.string(),
  mime_type: z.string(),
  size_bytes: z.int().nonnegative(),
});

export const finishAnswer = z.object({
  run_id: z.string(),
  state: z.enum(FINISH_STATES),
  status_message: z
    .object({
      message: z.string(),
      error_code: z.string().nullable().optional(),
      retryable: z.boolean().optional(),
      session_debug_until: z.string().nullable().optional(),
    })
    .nullable(),
});
