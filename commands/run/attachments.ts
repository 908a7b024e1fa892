/**
 * The attachment-prepare operation: a file uploaded ahead of a follow-up, stored as a blob and
 * recorded on the run it is meant for. POST /agent/runs/{run_id}/attachments lives here; the
 * conversation form (newest run) in commands/conversation/routes.ts.
 */
import { timeOrderedId } from '../../src/ids.js';
import { z } from 'zod';
import { commandContext } from '../../src/http/context.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { InvalidRequest } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { runDecider } from './run-decider.js';
import { type Attachment, runStream } from './events.js';
import { runParams } from './resource.js';
import { attachmentSchema, MAX_ATTACHMENT_BYTES } from './schema.js';
import type { Api } from '../../src/http/api.js';

export type AttachmentBody = z.infer<typeof attachmentSchema>;

/** Room for one attachment at its largest, base64-encoded, in a JSON body. */
export const ATTACHMENT_BODY_LIMIT = Math.ceil((MAX_ATTACHMENT_BYTES * 4) / 3) + 64 * 1024;

/** The prepared attachment: a follow-up names it by `attachment_id`. The stored file's id stays inside. */
export const preparedAttachment = z.object({
  attachment_id: z.string(),
  file_name: z.string(),
  mime_type: attachmentSchema.shape.mime_type,
  size_bytes: z.number().int(),
  run_id: z.string().describe('The run it was prepared for'),
});

export async function prepareAttachment(
  rt: Runtime,
  runId: string,
  body: AttachmentBody,
  context: CommandContext,
): Promise<z.infer<typeof preparedAttachment>> {
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
  const { attachment_id, file_name, size_bytes } = attachment;
  return { attachment_id, file_name, mime_type: body.mime_type, size_bytes, run_id: runId };
}

export default function runAttachmentRoutes(api: Api, rt: Runtime): void {
  api.post(
    '/agent/runs/:run_id/attachments',
    {
      bodyLimit: ATTACHMENT_BODY_LIMIT,
      schema: { params: runParams, body: attachmentSchema, response: { 201: preparedAttachment }, tags: ['runs'] },
      config: { idempotent: true },
    },
    async (req, reply) =>
      reply.code(201).send(await prepareAttachment(rt, req.params.run_id, req.body, commandContext(req))),
  );
}
