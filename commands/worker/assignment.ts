/**
 * What a worker is handed with a run: everything it needs to execute it, from the run's state on
 * the write side (the decider's fold, kept between reads) so it is exact at the moment of the
 * lease or its acknowledgement. The run's `turn` says what this execution is to do.
 */
import type { z } from 'zod';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { runDecider } from '../run/public.js';
import { type Attachment, runStream, type SealedContext } from '../run/events.js';
import { keyringFor } from '../../src/keyring.js';
import { signedBlobUrl } from '../../src/blobs/routes.js';
import type { assignmentSchema } from './answers.js';
import { own } from '../../src/own-keys.js';
import { runTraceparent } from '../../src/tracing/ids.js';

export type Assignment = z.infer<typeof assignmentSchema>;

/** The assignment of the execution that holds the run now. */
export async function assignmentOf(rt: Runtime, runId: string): Promise<Assignment> {
  const x = await rt.state(runDecider, runStream(runId));
  if (x.status !== 'live' || !x.held) throw new NotFound('run', runId);
  const c = x.created;
  return {
    run_id: c.run_id,
    execution_id: x.held.execution_id,
    worker_id: x.held.worker_id,
    state: x.state,
    lease_expires_at: x.held.lease_expires_at,
    title: c.title,
    source: c.source,
    prompt: x.turn.resumed || !c.sealed_context ? x.turn.prompt : withContext(rt, x.turn.prompt, c.sealed_context),
    mode: x.turn.mode,
    resumed: x.turn.resumed,
    conversation_id: c.conversation_id,
    parent_run_id: c.parent_run_id,
    root_run_id: c.root_run_id,
    skill_spec: c.skill_spec,
    config: c.config,
    environment_id: c.environment_id,
    interactive: c.interactive,
    metadata: c.metadata,
    attachments: withLinks(rt, x.turn.attachments),
    traceparent: runTraceparent(c.run_id, c.root_run_id),
  };
}

/** The prompt with the sealed context opened, or its `withdrawn` note once its key is gone. */
const withContext = (rt: Runtime, prompt: string, c: SealedContext) =>
  `${prompt}\n\n${keyringFor(rt.config).open(c.subject, c.sealed) ?? c.withdrawn}`;

const withLinks = (rt: Runtime, attachments: Attachment[]): Assignment['attachments'] =>
  attachments.map(({ blob, ...a }) => {
    const link = signedBlobUrl(rt, blob, a.file_name, a.mime_type);
    return { ...a, download_url: link.url, expires_at: link.expires_at };
  });

/** The attachments prepared for a run, by id, with download links (for follow-up signals). */
export async function preparedAttachments(
  rt: Runtime,
  runId: string,
  ids: readonly string[],
): Promise<Assignment['attachments']> {
  if (!ids.length) return [];
  const x = await rt.state(runDecider, runStream(runId));
  return withLinks(rt, x.status === 'live' ? ids.flatMap((id) => own(x.prepared, id) ?? []) : []);
}
