/**
 * POST /agent/workers/{worker_id}/runs/{run_id}/judgement: the worker executing a judge run
 * reports its classification (and reasoning, sealed with the scorer's key); the scoring
 * attempt records it as a score, or fails when the classification is not one the scorer allows.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { commandContext } from '../../src/http/context.js';
import { DomainError, NotFound } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { keyringFor } from '../../src/keyring.js';
import type { Runtime } from '../../src/runtime.js';
import { canView, runDecider } from '../run/public.js';
import { runStream } from '../run/events.js';
import { workerPrincipal, executionHeader, runParams as workerRunParams } from '../worker/public.js';
import { scorerDecider } from './scorer-decider.js';
import { type ScoringEvent, scorerKey, scorerStream, scoringStream } from './events.js';
import { MAX_REASON_BYTES } from './request-schemas.js';
import { scoringDecider } from './scoring-decider.js';

const judgementBody = z
  .object({
    classification: z.string().trim().min(1).max(200),
    reasoning: z
      .string()
      .max(64 * 1024)
      .optional(),
  })
  .strict();

const judgementAnswer = z.object({
  run_id: z.string(),
  attempt_id: z.string(),
  status: z.enum(['scored', 'failed']).describe('failed: the classification is not one the scorer allows'),
  classification: z.string(),
  score: z.number().nullable(),
  error: z.string().nullable(),
});

/** The first `max` bytes of `text` in UTF-8, never splitting a character. */
export function truncateUtf8(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  return bytes
    .subarray(0, max)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}

/** The judge run this execution of this worker holds: its scorer, scored run and scoring attempt. */
async function heldJudgeRun(
  rt: Runtime,
  req: FastifyRequest,
  params: z.infer<typeof workerRunParams>,
  context: CommandContext,
) {
  const { worker_id, run_id } = params;
  const run = await rt.state(runDecider, runStream(run_id));
  if (run.status !== 'live' || !canView(run, context)) throw new NotFound('run', run_id);
  const held = run.held;
  if (
    !held ||
    held.worker_id !== worker_id ||
    held.execution_id !== req.headers['x-execution-id'] ||
    run.state !== 'INPROGRESS'
  )
    throw new DomainError(
      409,
      'not_claimed',
      'Conflict',
      `run ${run_id} is not held by this execution (state ${run.state})`,
    );
  const m = run.created.metadata;
  if (run.created.source !== 'RUN_SCORER' || !m.scorer_uid || !m.scored_run_id || !m.scoring_attempt_id)
    throw new DomainError(409, 'not_a_judge', 'Conflict', `run ${run_id} is not a judge run`);
  return { scorer_uid: m.scorer_uid, scored_run_id: m.scored_run_id, attempt_id: m.scoring_attempt_id };
}

/** The reasoning, bounded and sealed with the scorer's key (null when none was given). */
function sealedReasoning(rt: Runtime, scorerUid: string, reasoning: string | undefined) {
  const text = reasoning?.trim() ? truncateUtf8(reasoning, MAX_REASON_BYTES) : null;
  const sealed = text === null ? null : keyringFor(rt.config).seal(scorerKey(scorerUid), text);
  if (text !== null && sealed === null) throw new NotFound('scorer', scorerUid);
  return sealed;
}

/** The answer: the score recorded, or why the attempt failed. */
const judgementOf = (recorded: ScoringEvent, classification: string) =>
  recorded.type === 'ScoringJudgementRecorded'
    ? {
        status: 'scored' as const,
        classification: recorded.data.classification,
        score: recorded.data.score,
        error: null,
      }
    : {
        status: 'failed' as const,
        classification,
        score: null,
        error: recorded.type === 'ScoringAttemptFailed' ? recorded.data.error : 'not recorded',
      };

async function judgement(
  rt: Runtime,
  req: FastifyRequest,
  params: z.infer<typeof workerRunParams>,
  body: z.infer<typeof judgementBody>,
) {
  workerPrincipal(req);
  const context = commandContext(req);
  const judge = await heldJudgeRun(rt, req, params, context);
  const scorer = await rt.state(scorerDecider, scorerStream(judge.scorer_uid));
  if (scorer.status !== 'live') throw new NotFound('scorer', judge.scorer_uid);
  const reason_sealed = sealedReasoning(rt, judge.scorer_uid, body.reasoning);
  const { events } = await rt.execute(
    scoringStream(judge.scorer_uid, judge.scored_run_id),
    scoringDecider,
    {
      type: 'RecordJudgement',
      data: {
        attempt_id: judge.attempt_id,
        judge_run_id: params.run_id,
        classification: body.classification,
        reason_sealed,
      },
    },
    context,
  );
  return { run_id: params.run_id, attempt_id: judge.attempt_id, ...judgementOf(events[0]!, body.classification) };
}

export default function judgementRoutes(api: Api, rt: Runtime): void {
  api.post(
    '/agent/workers/:worker_id/runs/:run_id/judgement',
    {
      schema: {
        params: workerRunParams,
        headers: executionHeader,
        body: judgementBody,
        response: { 201: judgementAnswer },
        tags: ['workers'],
      },
    },
    async (req, reply) => reply.code(201).send(await judgement(rt, req, req.params, req.body)),
  );
}
