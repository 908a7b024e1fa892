/**
 * POST /agent/runs (and its older alias POST /agent/run), and the commands on one run: cancel,
 * interrupt and follow-ups. The run decider decides each, and who may see the run (else 404).
 */
import { timeOrderedId } from '../../src/ids.js';
import { z } from 'zod';
import { activeTeam } from '../../src/http/auth.js';
import { commandContext } from '../../src/http/context.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { createRun } from './create.js';
import { sendFollowup } from './followup.js';
import { type RunCommand, runDecider } from './run-decider.js';
import { type RunEvent, runStream } from './events.js';
import { runParams as params, runStateSchema } from './resource.js';
import { RUN_REQUEST_BODY_LIMIT, runModeSchema, runRequestSchema } from './schema.js';
import type { Api } from '../../src/http/api.js';

/** `RunAgentResponse`. */
const createdResponse = z.object({
  run_id: z.string(),
  task_id: z.string().describe('Deprecated: the run id'),
  state: runStateSchema,
  conversation_id: z.string(),
});

const followupResponse = z.object({
  run_id: z.string(),
  state: runStateSchema.nullable().describe("The run's state after the follow-up"),
  routed_to: z
    .enum(['queued_prompt', 'live_execution', 'debug_session', 'new_execution'])
    .describe(
      'Joined the prompt of a run not started yet, went to the live execution or to the retained debug session, or resumed an ended run in a new execution',
    ),
});

const followupBody = z
  .object({
    message: z
      .string()
      .max(1_000_000)
      .refine((m) => m.trim() !== '', 'a follow-up needs a message'),
    mode: runModeSchema.optional(),
  })
  .strict();

/** Where a follow-up went, told by the event that recorded it. */
function routedTo(events: RunEvent[]): 'queued_prompt' | 'live_execution' | 'debug_session' | 'new_execution' {
  const [event] = events;
  if (event?.type === 'RunPromptExtended') return 'queued_prompt';
  if (event?.type === 'RunFollowupDelivered')
    return event.data.to === 'debug_session' ? 'debug_session' : 'live_execution';
  return 'new_execution';
}

export default function runRoutes(api: Api, rt: Runtime): void {
  const tags = ['runs'];
  const execute = (runId: string, command: RunCommand, context: CommandContext) =>
    rt.execute(runStream(runId), runDecider, command, context);

  for (const url of ['/agent/runs', '/agent/run']) {
    const schema = {
      body: runRequestSchema,
      response: { 200: createdResponse },
      tags,
      ...(url === '/agent/run' ? { deprecated: true } : {}),
    };
    api.post(url, { bodyLimit: RUN_REQUEST_BODY_LIMIT, schema, config: { idempotent: true } }, async (req) => {
      const run = await createRun(rt, req.body, commandContext(req), { source: 'API', team_uid: activeTeam(req).uid });
      return { run_id: run.run_id, task_id: run.run_id, state: run.state, conversation_id: run.conversation_id };
    });
  }

  // The hosted service answers with the run id as a JSON string: sent as written, not serialized again.
  const cancelResponse = z.string().describe('The id of the cancelled run, as a JSON string');
  api.post(
    '/agent/runs/:run_id/cancel',
    { schema: { params, response: { 200: cancelResponse }, tags } },
    async (req, reply) => {
      const { run_id: runId } = req.params;
      await execute(
        runId,
        { type: 'CancelRun', data: { run_id: runId, reason: 'cancelled through the API' } },
        commandContext(req),
      );
      return reply.type('application/json').send(JSON.stringify(runId));
    },
  );

  // No body at all (not even null): Fastify sends an undefined payload without serializing it.
  const interruptResponse = z
    .undefined()
    .describe('Accepted, with no body: the current turn is cancelled asynchronously');
  api.post(
    '/agent/runs/:run_id/interrupt',
    { schema: { params, response: { 202: interruptResponse }, tags } },
    async (req, reply) => {
      const { run_id: runId } = req.params;
      await execute(runId, { type: 'InterruptRun', data: { run_id: runId } }, commandContext(req));
      return reply.code(202).send();
    },
  );

  const followupSchema = { params, body: followupBody, response: { 200: followupResponse }, tags };
  api.post('/agent/runs/:run_id/followups', { schema: followupSchema, config: { idempotent: true } }, async (req) => {
    const { run_id: runId } = req.params;
    const { message, mode } = req.body;
    // A follow-up to a retained debug session starts a debug agent there: a new execution id.
    const { state, events } = await sendFollowup(
      rt,
      { run_id: runId, message, mode: mode ?? null, attachments: [], execution_id: timeOrderedId() },
      commandContext(req),
    );
    return { run_id: runId, state: state.status === 'live' ? state.state : null, routed_to: routedTo(events) };
  });
}
