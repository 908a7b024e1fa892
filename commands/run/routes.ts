/**
 * POST /agent/runs (and its older alias POST /agent/run), and the commands on one run: cancel,
 * interrupt and follow-ups. The run decider decides each, and who may see the run (else 404).
 */
import { timeOrderedId } from '../../src/ids.js';
import { z } from 'zod';
import { activeTeam } from '../../src/http/auth.js';
import { commandContext } from '../../src/http/context.js';
import { uidParam } from '../../src/http/schemas.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { createRun } from './create.js';
import { type RunCommand, runDecider } from './decider.js';
import { type RunEvent, runStream } from './events.js';
import { RUN_REQUEST_BODY_LIMIT, runModeSchema, runRequestSchema } from './schema.js';
import type { Api } from '../../src/http/api.js';

const params = z.object({ runId: uidParam });

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
    const schema = { body: runRequestSchema, tags, ...(url === '/agent/run' ? { deprecated: true } : {}) };
    api.post(url, { bodyLimit: RUN_REQUEST_BODY_LIMIT, schema }, async (req) => {
      const run = await createRun(rt, req.body, commandContext(req), { source: 'API', team_uid: activeTeam(req).uid });
      return { run_id: run.run_id, task_id: run.run_id, state: run.state, conversation_id: run.conversation_id };
    });
  }

  api.post('/agent/runs/:runId/cancel', { schema: { params, tags } }, async (req, reply) => {
    const { runId } = req.params;
    await execute(
      runId,
      { type: 'CancelRun', data: { run_id: runId, reason: 'cancelled through the API' } },
      commandContext(req),
    );
    // The hosted service answers with the run id as a JSON string.
    return reply.type('application/json').send(JSON.stringify(runId));
  });

  api.post('/agent/runs/:runId/interrupt', { schema: { params, tags } }, async (req, reply) => {
    const { runId } = req.params;
    await execute(runId, { type: 'InterruptRun', data: { run_id: runId } }, commandContext(req));
    return reply.code(202).send();
  });

  api.post('/agent/runs/:runId/followups', { schema: { params, body: followupBody, tags } }, async (req) => {
    const { runId } = req.params;
    const { message, mode } = req.body;
    // A follow-up to a retained debug session starts a debug agent there: a new execution id.
    const { state, events } = await execute(
      runId,
      {
        type: 'SendFollowup',
        data: { run_id: runId, message, mode: mode ?? null, attachments: [], execution_id: timeOrderedId() },
      },
      commandContext(req),
    );
    return { run_id: runId, state: state.status === 'live' ? state.state : null, routed_to: routedTo(events) };
  });
}
