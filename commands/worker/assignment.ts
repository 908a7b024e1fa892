/**
 * What a worker is handed with a run: everything it needs to execute it, folded from the run's
 * stream (the write side) so it is exact at the moment of the lease or its acknowledgement.
 *
 * The prompt of an execution is the run's prompt with the follow-ups that joined it while it was
 * queued; an execution started by a follow-up to an ended run (a resume) has that follow-up as
 * its prompt, with its attachments, and continues the same conversation.
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import {
  type Attachment,
  type RunCreatedData,
  type RunEvent,
  type RunMode,
  type RunState,
  runStream,
} from '../run/events.js';
import { signedBlobUrl } from '../../src/blobs/routes.js';

export interface Assignment {
  run_id: string;
  execution_id: string;
  worker_id: string;
  state: RunState;
  lease_expires_at: string | null;
  title: string;
  prompt: string;
  mode: RunMode;
  /** True when this execution continues an ended run (a follow-up started it). */
  resumed: boolean;
  conversation_id: string;
  parent_run_id: string | null;
  root_run_id: string;
  skill_spec: string | null;
  config: Record<string, unknown> | null;
  environment_id: string | null;
  interactive: boolean;
  metadata: Record<string, string>;
  attachments: Array<Omit<Attachment, 'blob'> & { download_url: string; expires_at: string }>;
}

interface Execution {
  created: RunCreatedData;
  prompt: string;
  mode: RunMode;
  resumed: boolean;
  attachments: Attachment[];
  prepared: Map<string, Attachment>;
  state: RunState;
  held: { worker_id: string; execution_id: string; lease_expires_at: string | null } | null;
}

type Event = { [K in RunEvent['type']]: RecordedEvent<Extract<RunEvent, { type: K }>> }[RunEvent['type']];

const HELD: readonly RunState[] = ['PENDING', 'CLAIMED', 'INPROGRESS'];

const joined = (prompt: string, message: string) => (prompt ? `${prompt}\n\n${message}` : message);

function fold(events: readonly Event[]): Execution | null {
  let x: Execution | null = null;
  for (const e of events) {
    if (e.type === 'RunCreated') {
      const created = e.data;
      x = {
        created,
        prompt: created.prompt,
        mode: created.mode,
        resumed: false,
        attachments: created.attachments,
        prepared: new Map(),
        state: 'QUEUED',
        held: null,
      };
      continue;
    }
    if (!x) continue;
    switch (e.type) {
      case 'RunPromptExtended':
        x.prompt = joined(x.prompt, e.data.message);
        x.mode = e.data.mode ?? x.mode;
        break;
      case 'RunAttachmentPrepared':
        x.prepared.set(e.data.attachment.attachment_id, e.data.attachment);
        break;
      case 'RunResumed':
        Object.assign(x, {
          prompt: e.data.message,
          mode: e.data.mode ?? x.mode,
          resumed: true,
          attachments: e.data.attachments.flatMap((id) => x!.prepared.get(id) ?? []),
        });
        break;
      case 'RunLeased':
        x.held = {
          worker_id: e.data.worker_id,
          execution_id: e.data.execution_id,
          lease_expires_at: e.data.lease_expires_at,
        };
        break;
      case 'RunClaimed':
        if (x.held) x.held.lease_expires_at = null;
        break;
    }
    x.state = nextState(x.state, e);
    if (!HELD.includes(x.state)) x.held = null;
  }
  return x;
}

function nextState(state: RunState, e: Event): RunState {
  switch (e.type) {
    case 'RunLeased':
      return 'PENDING';
    case 'RunClaimed':
      return 'CLAIMED';
    case 'RunStarted':
      return 'INPROGRESS';
    case 'RunFinished':
      return e.data.state;
    case 'RunCancelled':
      return 'CANCELLED';
    case 'RunLeaseExpired':
    case 'RunResumed':
      return 'QUEUED';
    case 'RunWorkerLost':
      return e.data.requeued ? 'QUEUED' : 'ERROR';
    default:
      return state;
  }
}

/** The assignment of the execution that holds the run now. */
export async function assignmentOf(rt: Runtime, runId: string): Promise<Assignment> {
  const x = fold((await rt.events.readStream(runStream(runId))) as unknown as Event[]);
  if (!x?.held) throw new NotFound('run', runId);
  const c = x.created;
  return {
    run_id: c.run_id,
    execution_id: x.held.execution_id,
    worker_id: x.held.worker_id,
    state: x.state,
    lease_expires_at: x.held.lease_expires_at,
    title: c.title,
    prompt: x.prompt,
    mode: x.mode,
    resumed: x.resumed,
    conversation_id: c.conversation_id,
    parent_run_id: c.parent_run_id,
    root_run_id: c.root_run_id,
    skill_spec: c.skill_spec,
    config: c.config,
    environment_id: c.environment_id,
    interactive: c.interactive,
    metadata: c.metadata,
    attachments: withLinks(rt, x.attachments),
  };
}

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
  const x = fold((await rt.events.readStream(runStream(runId))) as unknown as Event[]);
  return withLinks(
    rt,
    ids.flatMap((id) => x?.prepared.get(id) ?? []),
  );
}
