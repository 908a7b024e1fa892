/**
 * What a run tells the event streams (and, for its state changes, the team's outbound webhooks):
 * its state changes under the outbound webhooks' names, and on the run's own stream its timeline,
 * messages, questions, artifacts and usage. Built from the runs read model (it has applied the
 * event when the stream sends it), read-checked by `canReadRun`.
 */
import { z } from 'zod';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { StreamEventSource, StreamItem } from '../../src/streams/stream-events.js';
import { type RunDoc, runsProjection } from '../../projections/run/runs.js';
import type { FinishState, RunEvent, RunState } from './events.js';
import { principalSchema, runStateSchema, statusMessageSchema } from './resource.js';
import { canReadRun, ownerOfRun } from './run-access.js';
import { RUN_SOURCES } from './events.js';

const runStateChangedSchema = z.object({
  run_id: z.string(),
  state: runStateSchema.describe('The state the run moved to'),
  title: z.string(),
  factory_uid: z.string().nullable(),
  conversation_id: z.string(),
  parent_run_id: z.string().nullable(),
  root_run_id: z.string(),
  source: z.enum(RUN_SOURCES),
  creator: principalSchema,
  status_message: statusMessageSchema.nullable().describe('Why it ended, while this is its current state'),
  run_url: z.string().describe('GET it for the whole run'),
});

const STATE_TYPES = {
  'run.queued': 'A run was created, or resumed by a follow-up',
  'run.in_progress': 'Its worker started it',
  'run.succeeded': 'It finished successfully',
  'run.failed': 'It failed',
  'run.errored': 'It ended in error (its worker was lost, or the platform failed)',
  'run.blocked': 'It stopped, blocked on something it needs',
  'run.cancelled': 'It was cancelled',
} as const;
type RunStateType = keyof typeof STATE_TYPES;

const FINISHED: Record<FinishState, RunStateType> = {
  SUCCEEDED: 'run.succeeded',
  FAILED: 'run.failed',
  ERROR: 'run.errored',
  BLOCKED: 'run.blocked',
};

export const runOf = (rt: Runtime, runId: string) => rt.readModel(runsProjection).get(runId);

export const runItemOf = (run: RunDoc, type: string, data: Record<string, unknown>): StreamItem => ({
  type,
  data,
  team_uid: run.team_uid,
  factory_uid: run.factory_uid,
  run: { run_id: run.run_id, ancestors: run.ancestors },
  readable: (viewer) => canReadRun(ownerOfRun(run), viewer.principal, viewer.team),
});

/** The state change `event` makes, by its outbound name and the state it moved to; null for none. */
function stateChange(e: RunEvent): [RunStateType, RunState] | null {
  switch (e.type) {
    case 'RunCreated':
    case 'RunResumed':
      return ['run.queued', 'QUEUED'];
    case 'RunStarted':
      return ['run.in_progress', 'INPROGRESS'];
    case 'RunFinished':
      return [FINISHED[e.data.state], e.data.state];
    case 'RunCancelled':
      return ['run.cancelled', 'CANCELLED'];
    case 'RunWorkerLost':
      return e.data.requeued ? null : ['run.errored', 'ERROR'];
    default:
      return null;
  }
}

async function mapStateChange(rt: Runtime, event: RecordedEvent): Promise<StreamItem | null> {
  const e = event as unknown as RunEvent;
  const change = stateChange(e);
  const run = change && (await runOf(rt, e.data.run_id));
  if (!change || !run) return null;
  const [type, state] = change;
  return runItemOf(run, type, {
    run_id: run.run_id,
    state,
    title: run.title,
    factory_uid: run.factory_uid,
    conversation_id: run.conversation_id,
    parent_run_id: run.parent_run_id,
    root_run_id: run.root_run_id,
    source: run.source,
    creator: run.creator,
    status_message: state === run.state ? run.status_message : null,
    run_url: `${rt.config.publicBaseUrl}/api/v1/agent/runs/${run.run_id}`,
  });
}

const stateTypes = Object.fromEntries(
  Object.entries(STATE_TYPES).map(([name, description]) => [
    name,
    { feeds: ['team', 'run'] as const, description, schema: runStateChangedSchema },
  ]),
);

export const runStateEvents: StreamEventSource = {
  from: ['RunCreated', 'RunResumed', 'RunStarted', 'RunFinished', 'RunCancelled', 'RunWorkerLost'],
  types: stateTypes,
  map: mapStateChange,
};
