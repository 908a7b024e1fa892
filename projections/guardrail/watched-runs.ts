/**
 * The runs the guardrail sweeper watches (issue #33), one document each while it matters: a run
 * waiting for approval (until when), a run waiting in the queue (since when), and a run in progress
 * (since when, and its last progress: a timeline step, a message, an artifact or a usage report). A run leaves when that ends, so a
 * sweep reads what is pending or running, never the team's history.
 */
import { type ProjectionDocs, projection } from '../../src/projector/projection.js';
import type { RunEvent } from '../../commands/run/events.js';
import type { QueueStallEvent } from '../../commands/guardrail/events.js';

export interface WatchedRunDoc {
  [field: string]: unknown;
  run_id: string;
  /** `stall`: not a run but a team whose queue is stalled (`stall-<team_uid>`), until it ends. */
  kind: 'approval' | 'queued' | 'running' | 'stall';
  executing_team_uid: string;
  team_uid: string | null;
  factory_uid: string | null;
  /** Approval: when it expires. */
  expires_at: string | null;
  /** Queued: since when it waits for a worker. */
  queued_at?: string | null;
  /** Running: when this execution started, and when it last made progress. */
  started_at: string | null;
  progressed_at: string | null;
}

type Created = Extract<RunEvent, { type: 'RunCreated' }>['data'];

interface PlaceDoc {
  [field: string]: unknown;
  executing_team_uid: string;
  team_uid: string | null;
  factory_uid: string | null;
}
type Tables = { places: PlaceDoc };

/** The run's place, kept from its creation for the documents that follow. */
const placeOf = (c: Created): PlaceDoc => ({
  executing_team_uid: c.executing_team_uid,
  team_uid: c.team_uid,
  factory_uid: c.factory_uid,
});

export const watchedRunsProjection = projection<RunEvent | QueueStallEvent, WatchedRunDoc, Tables>({
  name: 'guardrail_watched_runs',
  version: 1,
  indexes: [
    ['kind', 'expires_at'],
    ['kind', 'progressed_at'],
    ['kind', 'queued_at'],
  ],
  tables: { places: [] },
  on: {
    RunCreated: (e, docs) => {
      docs.in('places').put(e.data.run_id, placeOf(e.data));
      docs.put(e.data.run_id, queuedDoc(e.data.run_id, placeOf(e.data), e.metadata.occurred_at));
    },
    RunLeased: (e, docs) => docs.delete(e.data.run_id),
    RunLeaseExpired: (e, docs) => queued(docs, e.data.run_id, e.metadata.occurred_at),
    RunApprovalRequested: async (e, docs) => {
      const place = await docs.in('places').get(e.data.run_id);
      if (!place) return;
      docs.put(e.data.run_id, {
        run_id: e.data.run_id,
        kind: 'approval',
        ...place,
        expires_at: e.data.expires_at,
        started_at: null,
        progressed_at: null,
      });
    },
    RunApproved: (e, docs) => queued(docs, e.data.run_id, e.metadata.occurred_at),
    RunCancelled: (e, docs) => docs.delete(e.data.run_id),
    RunFinished: (e, docs) => docs.delete(e.data.run_id),
    RunResumed: (e, docs) => queued(docs, e.data.run_id, e.metadata.occurred_at),
    RunWorkerLost: (e, docs) =>
      e.data.requeued ? queued(docs, e.data.run_id, e.metadata.occurred_at) : docs.delete(e.data.run_id),
    RunStarted: async (e, docs) => {
      const place = await docs.in('places').get(e.data.run_id);
      if (!place) return;
      const at = e.metadata.occurred_at;
      docs.put(e.data.run_id, {
        run_id: e.data.run_id,
        kind: 'running',
        ...place,
        expires_at: null,
        started_at: at,
        progressed_at: at,
      });
    },
    QueueStalled: (e, docs) =>
      docs.put(`stall-${e.data.team_uid}`, {
        run_id: '',
        kind: 'stall',
        executing_team_uid: e.data.team_uid,
        team_uid: e.data.team_uid,
        factory_uid: null,
        expires_at: null,
        started_at: null,
        progressed_at: null,
      }),
    QueueStallEnded: (e, docs) => docs.delete(`stall-${e.data.team_uid}`),
    RunTimelineRecorded: (e, docs) => progressed(docs, e.data.run_id, e.metadata.occurred_at),
    RunMessageRecorded: (e, docs) => progressed(docs, e.data.run_id, e.metadata.occurred_at),
    RunArtifactAdded: (e, docs) => progressed(docs, e.data.run_id, e.metadata.occurred_at),
    RunUsageReported: (e, docs) => progressed(docs, e.data.run_id, e.metadata.occurred_at),
  },
});

const queuedDoc = (run_id: string, place: PlaceDoc, at: string): WatchedRunDoc => ({
  run_id,
  kind: 'queued',
  ...place,
  expires_at: null,
  queued_at: at,
  started_at: null,
  progressed_at: null,
});

/** The run waits in the queue again (approved, handed back, resumed). */
async function queued(docs: ProjectionDocs<WatchedRunDoc, Tables>, runId: string, at: string): Promise<void> {
  const place = await docs.in('places').get(runId);
  if (place) docs.put(runId, queuedDoc(runId, place, at));
}

async function progressed(docs: ProjectionDocs<WatchedRunDoc, Tables>, runId: string, at: string): Promise<void> {
  const run = await docs.get(runId);
  if (run?.kind === 'running') docs.patch(runId, { progressed_at: at });
}
