/**
 * What a run's approval tells the event streams and the team's outbound webhooks (issue #33): asked,
 * given, denied or expired. Run events, so the run feature registers them, read-checked as the run
 * is (`runItemOf`: `canReadRun`). The decision's own fields follow the run's names.
 */
import { z } from 'zod';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { StreamEventSource, StreamItem } from '../../src/streams/stream-events.js';
import type { RunEvent } from './events.js';
import { runItemOf, runOf } from './stream-events.js';

const approvalRun = {
  run_id: z.string(),
  title: z.string(),
  factory_uid: z.string().nullable(),
  run_url: z.string().describe('GET it for the whole run'),
};
const decidedBy = z.object({ type: z.enum(['user', 'agent']), uid: z.string() });
const feeds = ['team', 'run'] as const;

const TYPES = {
  'run.approval_requested': {
    feeds,
    description: 'A run waits for a team admin to approve it',
    schema: z.object({
      ...approvalRun,
      rule: z.enum(['factory', 'team', 'automation', 'schedule']).describe('What asked for the approval'),
      requested_at: z.string(),
      expires_at: z.string(),
    }),
  },
  'run.approved': {
    feeds,
    description: 'An admin approved a waiting run',
    schema: z.object({ ...approvalRun, by: decidedBy, at: z.string() }),
  },
  'run.denied': {
    feeds,
    description: 'An admin denied a waiting run (it is cancelled)',
    schema: z.object({ ...approvalRun, by: decidedBy, at: z.string(), reason: z.string().nullable() }),
  },
  'run.approval_expired': {
    feeds,
    description: 'No one decided on a waiting run in time (it is cancelled)',
    schema: z.object({ ...approvalRun, at: z.string() }),
  },
} as const;

const TYPE_OF: Partial<Record<RunEvent['type'], keyof typeof TYPES>> = {
  RunApprovalRequested: 'run.approval_requested',
  RunApproved: 'run.approved',
  RunDenied: 'run.denied',
  RunApprovalExpired: 'run.approval_expired',
};

async function mapApproval(rt: Runtime, event: RecordedEvent): Promise<StreamItem | null> {
  const e = event as unknown as RunEvent;
  const type = TYPE_OF[e.type];
  const run = type && (await runOf(rt, e.data.run_id));
  if (!type || !run) return null;
  return runItemOf(run, type, {
    ...e.data,
    run_id: run.run_id,
    title: run.title,
    factory_uid: run.factory_uid,
    run_url: `${rt.config.publicBaseUrl}/api/v1/agent/runs/${run.run_id}`,
  });
}

export const runApprovalEvents: StreamEventSource = {
  from: Object.keys(TYPE_OF),
  types: TYPES,
  map: mapApproval,
};
