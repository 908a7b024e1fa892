/**
 * The setup and lifecycle timeline of each run, oldest first: one document per run. Lifecycle
 * events take the hosted service's `event_type` names where it has one (`oz_run_created`,
 * `oz_run_claimed`, `agent_started`, `oz_run_done`, `oz_run_failed`, `oz_run_errored`,
 * `oz_run_blocked`, `oz_run_cancelled`); the others are `run_leased`, `lease_expired`,
 * `followup_queued`, `followup_delivered`, `run_resumed`, `interrupt_requested` and
 * `worker_lost`. Entries a worker records keep the name it gave them (`worker_container_ready`...).
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { projection, type Docs } from '../../src/projector/projection.js';
import type { FinishState, RunEvent, RunMode } from '../../commands/run/events.js';

interface TimelineEntry {
  [field: string]: unknown;
  /** The id of the event that recorded the entry. */
  event_uuid: string;
  run_id: string;
  execution_id: string | null;
  event_type: string;
  occurred_at: string;
  payload: Record<string, unknown>;
}

export interface RunTimelineDoc {
  [field: string]: unknown;
  run_id: string;
  /** The execution a worker holds now: entries recorded without one belong to it. */
  execution_id: string | null;
  entries: TimelineEntry[];
}

const FINISHED: Record<FinishState, string> = {
  SUCCEEDED: 'oz_run_done',
  FAILED: 'oz_run_failed',
  ERROR: 'oz_run_errored',
  BLOCKED: 'oz_run_blocked',
};

const withMode = (mode: RunMode | null) => (mode ? { mode } : {});

interface Entry {
  event_type: string;
  payload?: Record<string, unknown>;
  /** The entry's execution; the run's current one when omitted. */
  execution_id?: string | null;
  /** The run's current execution after this entry; unchanged when omitted. */
  holds?: string | null;
}

/** Appends the entry of `e` to its run's timeline, once: a replayed event finds its entry there. */
async function append(docs: Docs<RunTimelineDoc>, e: RecordedEvent<RunEvent>, entry: Entry) {
  const doc = await docs.get(e.data.run_id);
  if (!doc || doc.entries.some((x) => x.event_uuid === e.id)) return;
  const added: TimelineEntry = {
    event_uuid: e.id,
    run_id: doc.run_id,
    execution_id: entry.execution_id === undefined ? doc.execution_id : entry.execution_id,
    event_type: entry.event_type,
    occurred_at: e.metadata.occurred_at,
    payload: entry.payload ?? {},
  };
  docs.patch(doc.run_id, {
    entries: [...doc.entries, added],
    execution_id: entry.holds === undefined ? doc.execution_id : entry.holds,
  });
}

export const runTimelineProjection = projection<RunEvent, RunTimelineDoc>({
  name: 'run_timeline',
  version: 1,
  indexes: [],
  on: {
    RunCreated: (e, docs) => {
      const { run_id, source, parent_run_id } = e.data;
      const created: TimelineEntry = {
        event_uuid: e.id,
        run_id,
        execution_id: null,
        event_type: 'oz_run_created',
        occurred_at: e.metadata.occurred_at,
        payload: { source, ...(parent_run_id ? { parent_run_id } : {}) },
      };
      docs.put(run_id, { run_id, execution_id: null, entries: [created] } satisfies RunTimelineDoc);
    },
    RunPromptExtended: (e, docs) => append(docs, e, { event_type: 'followup_queued', payload: withMode(e.data.mode) }),
    RunLeased: (e, docs) => {
      const { worker_id, execution_id, lease_expires_at } = e.data;
      return append(docs, e, {
        event_type: 'run_leased',
        payload: { worker_id, lease_expires_at },
        execution_id,
        holds: execution_id,
      });
    },
    RunLeaseExpired: (e, docs) =>
      append(docs, e, { event_type: 'lease_expired', payload: { worker_id: e.data.worker_id }, holds: null }),
    RunClaimed: (e, docs) =>
      append(docs, e, {
        event_type: 'oz_run_claimed',
        payload: { worker_id: e.data.worker_id },
        execution_id: e.data.execution_id,
      }),
    RunStarted: (e, docs) => append(docs, e, { event_type: 'agent_started', execution_id: e.data.execution_id }),
    RunTimelineRecorded: (e, docs) => append(docs, e, { event_type: e.data.name, payload: e.data.detail }),
    RunFinished: (e, docs) => {
      const { state, status_message, execution_id } = e.data;
      return append(docs, e, {
        event_type: FINISHED[state],
        payload: { state, ...(status_message ? { status_message } : {}) },
        execution_id,
        holds: null,
      });
    },
    RunCancelled: (e, docs) =>
      append(docs, e, { event_type: 'oz_run_cancelled', payload: { reason: e.data.reason }, holds: null }),
    RunInterruptRequested: (e, docs) =>
      append(docs, e, { event_type: 'interrupt_requested', execution_id: e.data.execution_id }),
    RunFollowupDelivered: (e, docs) =>
      append(docs, e, {
        event_type: 'followup_delivered',
        payload: { to: e.data.to, ...withMode(e.data.mode) },
        execution_id: e.data.execution_id,
      }),
    RunResumed: (e, docs) =>
      append(docs, e, { event_type: 'run_resumed', payload: withMode(e.data.mode), execution_id: null, holds: null }),
    RunWorkerLost: (e, docs) =>
      append(docs, e, {
        event_type: 'worker_lost',
        payload: { worker_id: e.data.worker_id, requeued: e.data.requeued },
        holds: null,
      }),
  },
});
