/**
 * Commands addressed by conversation: follow-ups, interrupts and attachment-prepare. Each goes to
 * the conversation's newest run (read from the conversation stream) through the run decider,
 * which also decides visibility: a conversation whose newest run the caller cannot view is 404.
 */
import { timeOrderedId } from '../../src/ids.js';
import { z } from 'zod';
import { commandContext } from '../../src/http/context.js';
import { uidParam } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import {
  ATTACHMENT_BODY_LIMIT,
  prepareAttachment,
  preparedAttachment,
  type RunCommand,
  runDecider,
  runStateSchema,
  attachmentSchema,
  MAX_ATTACHMENTS,
  runModeSchema,
  sendFollowup,
} from '../run/public.js';
import { runStream } from '../run/events.js';
import { conversationDecider } from './conversation-decider.js';
import { conversationStream } from './events.js';
import type { Api } from '../../src/http/api.js';

const params = z.object({ conversation_id: uidParam });

const followupBody = z
  .object({
    message: z
      .string()
      .max(1_000_000)
      .refine((m) => m.trim() !== '', 'a follow-up needs a message'),
    mode: runModeSchema.optional(),
    attachments: z.array(uidParam).max(MAX_ATTACHMENTS, `at most ${MAX_ATTACHMENTS} attachments`).default([]),
  })
  .strict();

const followupResponse = z.object({
  conversation_id: z.string(),
  run_id: z.string().describe("The conversation's newest run, which the follow-up went to"),
  state: runStateSchema.nullable().describe("The run's state after the follow-up"),
});

const interruptResponse = z.object({ conversation_id: z.string(), run_id: z.string() });

const attachmentResponse = preparedAttachment.extend({ conversation_id: z.string() });

async function newestRun(rt: Runtime, conversationId: string): Promise<string> {
  const conversation = await rt.state(conversationDecider, conversationStream(conversationId));
  const newest = conversation.runs.at(-1);
  if (!newest) throw new NotFound('conversation', conversationId);
  return newest.run_id;
}

/** Runs `work` on the newest run; a run the caller cannot view makes the conversation unknown. */
async function onNewestRun<T>(rt: Runtime, conversationId: string, work: (runId: string) => Promise<T>): Promise<T> {
  const runId = await newestRun(rt, conversationId);
  try {
    return await work(runId);
  } catch (error) {
    if (error instanceof NotFound) throw new NotFound('conversation', conversationId);
    throw error;
  }
}

const execute = (rt: Runtime, runId: string, command: RunCommand, context: CommandContext) =>
  rt.execute(runStream(runId), runDecider, command, context);

export default function conversationRoutes(api: Api, rt: Runtime): void {
  const tags = ['conversations'];

  api.post(
    '/agent/conversations/:conversation_id/followups',
    { schema: { params, body: followupBody, response: { 200: followupResponse }, tags }, config: { idempotent: true } },
    async (req) => {
      const { conversation_id } = req.params;
      const { message, mode, attachments } = req.body;
      return onNewestRun(rt, conversation_id, async (run_id) => {
        const { state } = await sendFollowup(
          rt,
          { run_id, message, mode: mode ?? null, attachments, execution_id: timeOrderedId() },
          commandContext(req),
        );
        return { conversation_id, run_id, state: state.status === 'live' ? state.state : null };
      });
    },
  );

  const interruptSchema = { params, response: { 202: interruptResponse }, tags };
  api.post('/agent/conversations/:conversation_id/interrupt', { schema: interruptSchema }, async (req, reply) => {
    const { conversation_id } = req.params;
    return onNewestRun(rt, conversation_id, async (run_id) => {
      await execute(rt, run_id, { type: 'InterruptRun', data: { run_id } }, commandContext(req));
      return reply.code(202).send({ conversation_id, run_id });
    });
  });

  api.post(
    '/agent/conversations/:conversation_id/attachments',
    {
      bodyLimit: ATTACHMENT_BODY_LIMIT,
      schema: { params, body: attachmentSchema, response: { 201: attachmentResponse }, tags },
      config: { idempotent: true },
    },
    async (req, reply) => {
      const prepared = await onNewestRun(rt, req.params.conversation_id, (runId) =>
        prepareAttachment(rt, runId, req.body, commandContext(req)),
      );
      return reply.code(201).send({ ...prepared, conversation_id: req.params.conversation_id });
    },
  );
}
