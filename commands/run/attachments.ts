/**
 * The attachment-prepare operation: a file uploaded ahead of a follow-up, stored as a blob and
 * recorded on the run it is meant for. POST /agent/runs/{runId}/attachments lives here; the
 * conversation form (newest run) in commands/conversation/routes.ts.
 */
import { timeOrderedId } from '../../src/ids.js';
import { z } from 'zod';
import { commandContext } from '../../src/http/context.js';
import { uidParam } from '../../src/http/schemas.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { InvalidRequest } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { runDecider } from './decider.js';
import { type Attachment, runStream } from './events.js';
import { attachmentSchema, MAX_ATTACHMENT_BYTES } from './schema.js';
import type { Api } from '../../src/http/api.js';

export type AttachmentBody = z.infer<typeof attachmentSchema>;

/** Room for one attachment at its largest, base64-encoded, in a JSON body. */
export const ATTACHMENT_BODY_LIMIT = Math.ceil((MAX_ATTACHMENT_BYTES * 4) / 3) + 64 * 1024;

export async function prepareAttachment(rt: Runtime, runId: string, body: AttachmentBody, context: CommandContext) {
  const bytes = Buffer.from(body.data, 'base64');
  if (bytes.length > MAX_ATTACHMENT_BYTES) {
    throw new InvalidRequest('an attachment is at most 10 MB', [
      { path: 'body.data', message: `at most ${MAX_ATTACHMENT_BYTES} bytes` },
    ]);
  }
  const attachment: Attachment = {
    attachment_id: timeOrderedId(),
    file_name: body.file_name,
    mime_type: body.mime_type,
    size_bytes: bytes.length,
    blob: await rt.blobs.put(bytes),
  };
  await rt.execute(
    runStream(runId),
    runDecider,
    { type: 'PrepareAttachment', data: { run_id: runId, attachment } },
    context,
  );
  const { blob: _blob, ...shown } = attachment;
  return { ...shown, run_id: runId };
}

export default function runAttachmentRoutes(api: Api, rt: Runtime): void {
  api.post(
    '/agent/runs/:runId/attachments',
    {
      bodyLimit: ATTACHMENT_BODY_LIMIT,
      schema: { params: z.object({ runId: uidParam }), body: attachmentSchema, tags: ['runs'] },
    },
    async (req, reply) =>
      reply.code(201).send(await prepareAttachment(rt, req.params.runId, req.body, commandContext(req))),
  );
}
