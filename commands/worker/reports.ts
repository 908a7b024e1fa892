/**
 * The worker protocol, part two: what a worker reports on a run it holds, under
 * /agent/workers/{worker_id}/runs/{run_id}/. Each report names its execution in the
 * `X-Execution-Id` header; the run's decider hears only the execution that holds the run (else
 * 409 `not_claimed`), so a worker that lost its lease cannot write into the next execution.
 */
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { timeOrderedId } from '../../src/ids.js';
import { commandContext } from '../../src/http/context.js';
import { DomainError } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { workersOf } from './presence.js';
import { runDecider, type RunCommand } from '../run/public.js';
import { type Attachment, runStream, type StatusMessage } from '../run/events.js';
import { priceReported } from '../analytics/public.js';
import { assignmentOf } from './assignment.js';
import { workerPrincipal } from './principal.js';
import {
  claimAnswer,
  finishAnswer,
  handoffAnswer,
  messageAnswer,
  questionAnswer,
  reportedArtifact,
  startAnswer,
  timelineAnswer,
  uploadedArtifact,
  usageAnswer,
} from './answers.js';
import {
  artifactBody,
  executionHeader,
  fileQuery,
  finishBody,
  handoffQuery,
  messageBody,
  questionBody,
  runParams,
  timelineBody,
  usageBody,
} from './schema.js';
import type { Api } from '../../src/http/api.js';

type Held = { run_id: string; worker_id: string; execution_id: string };
type Req = FastifyRequest & { params: { worker_id: string; run_id: string }; headers: { 'x-execution-id': string } };

const schema = { params: runParams, headers: executionHeader, tags: ['workers'] };

/** The body of a raw upload; anything but application/octet-stream is a 415. */
function uploaded(req: FastifyRequest): Buffer {
  if (!Buffer.isBuffer(req.body))
    throw new DomainError(
      415,
      'unsupported_media_type',
      'Unsupported media type',
      'upload the file as application/octet-stream',
    );
  return req.body;
}

/** How a report reaches the run's decider, as the execution the request names. */
function reporting(rt: Runtime) {
  /** The holder named by the request, after checking the caller is an agent of a team. */
  function heldOf(req: Req): { held: Held; context: CommandContext } {
    const { team_uid } = workerPrincipal(req);
    const { worker_id, run_id } = req.params;
    workersOf(rt).registry.touch(team_uid, worker_id);
    return { held: { run_id, worker_id, execution_id: req.headers['x-execution-id'] }, context: commandContext(req) };
  }

  const report = (req: Req, command: (held: Held) => RunCommand) => {
    const { held, context } = heldOf(req);
    return rt.execute(runStream(held.run_id), runDecider, command(held), context);
  };

  /** A report with a cost: priced in the run's cost ledger before the answer (see analytics). */
  const priced = async (req: Req, command: (held: Held) => RunCommand) => {
    const handled = await report(req, command);
    await priceReported(rt, req.params.run_id, handled.events.length);
    return handled;
  };

  /** Refuses (as the decider would) before a file is stored, so a refused upload stores nothing. */
  async function checkHeld(req: Req, command: (held: Held) => RunCommand): Promise<void> {
    const { held, context } = heldOf(req);
    const state = await rt.state(runDecider, runStream(held.run_id));
    runDecider.decide(command(held), state, context);
  }

  return { rt, report, priced, checkHeld };
}

type Reporting = ReturnType<typeof reporting>;

export function reportRoutes(api: Api, rt: Runtime): void {
  const reports = reporting(rt);
  claimRoute(api, reports);
  startRoute(api, reports);
  timelineRoute(api, reports);
  messageRoute(api, reports);
  artifactRoute(api, reports);
  questionRoute(api, reports);
  fileRoute(api, reports);
  usageRoute(api, reports);
  handoffRoute(api, reports);
  finishRoute(api, reports);
}

function claimRoute(api: Api, { rt, report }: Reporting): void {
  api.post(
    '/agent/workers/:worker_id/runs/:run_id/claim',
    { schema: { ...schema, response: { 200: claimAnswer } } },
    async (req) => {
      await report(req, (held) => ({ type: 'ClaimRun', data: held }));
      // The prompt as it stands now, follow-ups included: from here on they reach the execution.
      return { run: await assignmentOf(rt, req.params.run_id) };
    },
  );
}

function startRoute(api: Api, { report }: Reporting): void {
  api.post(
    '/agent/workers/:worker_id/runs/:run_id/start',
    { schema: { ...schema, response: { 200: startAnswer } } },
    async (req) => {
      await report(req, (held) => ({ type: 'StartRun', data: held }));
      return { run_id: req.params.run_id, state: 'INPROGRESS' as const };
    },
  );
}

function timelineRoute(api: Api, { report }: Reporting): void {
  api.post(
    '/agent/workers/:worker_id/runs/:run_id/timeline',
    { schema: { ...schema, body: timelineBody, response: { 201: timelineAnswer } } },
    async (req, reply) => {
      await report(req, (held) => ({ type: 'RecordTimeline', data: { ...held, ...req.body } }));
      return reply.code(201).send({ run_id: req.params.run_id, ...req.body });
    },
  );
}

function messageRoute(api: Api, { report }: Reporting): void {
  api.post(
    '/agent/workers/:worker_id/runs/:run_id/messages',
    { schema: { ...schema, body: messageBody, response: { 201: messageAnswer } } },
    async (req, reply) => {
      const message = {
        message_id: req.body.message_id ?? timeOrderedId(),
        step_id: req.body.step_id ?? null,
        parent_step_id: req.body.parent_step_id ?? null,
        role: req.body.role,
        content: req.body.content,
      };
      await report(req, (held) => ({ type: 'RecordMessage', data: { ...held, ...message } }));
      return reply.code(201).send({ run_id: req.params.run_id, ...message });
    },
  );
}

function artifactRoute(api: Api, { priced }: Reporting): void {
  api.post(
    '/agent/workers/:worker_id/runs/:run_id/artifacts',
    { schema: { ...schema, body: artifactBody, response: { 201: reportedArtifact } } },
    async (req, reply) => {
      const artifact_uid = timeOrderedId();
      // A plan is its own document (reference notes: PLAN{artifact_uid, document_uid, ...}).
      const artifact: z.infer<typeof reportedArtifact> =
        req.body.artifact_type === 'PLAN'
          ? { artifact_uid, ...req.body, document_uid: artifact_uid }
          : { artifact_uid, ...req.body };
      await priced(req, (held) => ({ type: 'AddArtifact', data: { ...held, artifact } }));
      return reply.code(201).send(artifact);
    },
  );
}

function questionRoute(api: Api, { report }: Reporting): void {
  api.post(
    '/agent/workers/:worker_id/runs/:run_id/questions',
    { schema: { ...schema, body: questionBody, response: { 201: questionAnswer } } },
    async (req, reply) => {
      const ask_id = req.body.ask_id ?? timeOrderedId();
      const questions = req.body.questions.map((q, i) => ({ ...q, id: q.id ?? `q${i + 1}` }));
      await report(req, (held) => ({ type: 'AskQuestion', data: { ...held, ask_id, questions } }));
      return reply.code(201).send({ run_id: req.params.run_id, ask_id, questions });
    },
  );
}

function fileRoute(api: Api, { rt, report, checkHeld }: Reporting): void {
  api.put(
    '/agent/workers/:worker_id/runs/:run_id/files',
    {
      bodyLimit: rt.config.WORKER_UPLOAD_MAX_BYTES,
      schema: { ...schema, querystring: fileQuery, response: { 201: uploadedArtifact } },
    },
    async (req, reply) => {
      const bytes = uploaded(req);
      const { artifact_type, filename, mime_type, filepath, title, description, public: isPublic } = req.query;
      const artifact: z.infer<typeof uploadedArtifact> & { blob: string } = {
        artifact_uid: timeOrderedId(),
        artifact_type,
        public: isPublic,
        filename,
        filepath: filepath ?? filename,
        mime_type,
        size_bytes: bytes.length,
        ...(title !== undefined ? { title } : {}),
        ...(description !== undefined ? { description } : {}),
        blob: '',
      };
      const command = (held: Held): RunCommand => ({ type: 'AddArtifact', data: { ...held, artifact } });
      await checkHeld(req, command);
      artifact.blob = await rt.blobs.put(bytes);
      await report(req, command);
      const { blob: _blob, ...shown } = artifact;
      return reply.code(201).send(shown);
    },
  );
}

function usageRoute(api: Api, { priced }: Reporting): void {
  api.post(
    '/agent/workers/:worker_id/runs/:run_id/usage',
    { schema: { ...schema, body: usageBody, response: { 200: usageAnswer } } },
    async (req) => {
      await priced(req, (held) => ({ type: 'ReportUsage', data: { ...held, usage: req.body } }));
      return { run_id: req.params.run_id, usage: req.body };
    },
  );
}

function handoffRoute(api: Api, { rt, report, checkHeld }: Reporting): void {
  api.put(
    '/agent/workers/:worker_id/runs/:run_id/handoff',
    {
      bodyLimit: rt.config.WORKER_UPLOAD_MAX_BYTES,
      schema: { ...schema, querystring: handoffQuery, response: { 201: handoffAnswer } },
    },
    async (req, reply) => {
      const bytes = uploaded(req);
      const attachment: Attachment = {
        attachment_id: timeOrderedId(),
        file_name: req.query.filename,
        mime_type: req.query.mime_type,
        size_bytes: bytes.length,
        blob: '',
      };
      const command = (held: Held): RunCommand => ({ type: 'AddHandoffFile', data: { ...held, attachment } });
      await checkHeld(req, command);
      attachment.blob = await rt.blobs.put(bytes);
      await report(req, command);
      const { blob: _blob, ...shown } = attachment;
      return reply.code(201).send({ run_id: req.params.run_id, ...shown });
    },
  );
}

function finishRoute(api: Api, { priced }: Reporting): void {
  api.post(
    '/agent/workers/:worker_id/runs/:run_id/finish',
    { schema: { ...schema, body: finishBody, response: { 200: finishAnswer } } },
    async (req) => {
      const given = req.body.status_message;
      const status_message: StatusMessage | null =
        given === undefined ? null : typeof given === 'string' ? { message: given } : given;
      await priced(req, (held) => ({ type: 'FinishRun', data: { ...held, state: req.body.state, status_message } }));
      return { run_id: req.params.run_id, state: req.body.state, status_message };
    },
  );
}
