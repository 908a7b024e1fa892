/** The answers of the worker API: what a worker is told, and each report as recorded. */
import { z } from 'zod';
import { FINISH_STATES, RUN_SOURCES, RUN_STATES } from '../run/events.js';
import { runModeSchema } from '../run/public.js';
import { contentBlockWith, messageBody, usage } from './schema.js';

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
    traceparent: z
      .string()
      .describe(
        "W3C trace context of the run's span: send it as `traceparent` with the run's reports, and give it to what executes the run (the reference worker sets TRACEPARENT), so their spans join the run's trace",
      ),
  })
  .describe('A run handed to a worker: everything it needs to execute it');

/** A signal's stop causes (`cancel`). */
const stopCause = z.enum(['cancelled', 'lease_expired', 'worker_lost', 'not_held', 'timed_out']);

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

/** A question as asked: each has its id. */
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
