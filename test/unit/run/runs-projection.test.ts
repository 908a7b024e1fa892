import { describe, expect, it } from 'vitest';
import type { RunCreatedData, RunEvent } from '../../../commands/run/events.js';
import { runTimelineProjection } from '../../../projections/run/run-timeline.js';
import { runsProjection } from '../../../projections/run/runs.js';
import type { NewEvent } from '../../../src/eventstore/port.js';
import { metadata, project, recorded } from '../../helpers/projection-spec.js';
import { runCreatedData } from '../../helpers/run-fixtures.js';

const at = (minute: number, second = 0) =>
  `2026-01-01T00:${String(minute).padStart(2, '0')}:${String(second).padStart(2, '0')}.000Z`;
const on = (minute: number, event: RunEvent, second = 0): NewEvent & { metadata: ReturnType<typeof metadata> } => ({
  ...event,
  metadata: metadata(at(minute, second)),
});

const created = (run_id: string, fields: Partial<RunCreatedData> = {}): RunEvent => ({
  type: 'RunCreated',
  data: runCreatedData(run_id, { title: 'Fix The Build', ...fields }),
});

/** One execution of `run_id` from lease to start. */
const execution = (run_id: string, execution_id: string, minute: number) => [
  on(minute, { type: 'RunLeased', data: { run_id, worker_id: 'w-1', execution_id, lease_expires_at: at(minute + 1) } }),
  on(minute, { type: 'RunClaimed', data: { run_id, worker_id: 'w-1', execution_id } }),
  on(minute, { type: 'RunStarted', data: { run_id, execution_id } }),
];

const handoff = (run_id: string, execution_id: string, attachment_id: string): RunEvent => ({
  type: 'RunHandoffFileAdded',
  data: {
    run_id,
    execution_id,
    attachment: {
      attachment_id,
      file_name: `${attachment_id}.tar`,
      mime_type: 'application/x-tar',
      size_bytes: 1,
      blob: `blob-${attachment_id}`,
    },
  },
});

const history = recorded([
  on(
    0,
    created('r-1', {
      metadata: { 'ticket.id': 'VIS-1', automation_id: 'au-1' },
      config: { name: 'Reviewer', model_id: 'gpt' },
    }),
  ),
  on(0, { type: 'RunPromptExtended', data: { run_id: 'r-1', message: 'and the docs', mode: null } }),
  ...execution('r-1', 'x-1', 1),
  on(
    1,
    { type: 'RunTimelineRecorded', data: { run_id: 'r-1', name: 'worker_container_ready', detail: { image: 'node' } } },
    30,
  ),
  on(
    2,
    created('r-2', {
      parent_run_id: 'r-1',
      root_run_id: 'r-1',
      depth: 1,
      skill_spec: 'acme/tools:skills/lint/SKILL.md',
      title: 'lint',
    }),
  ),
  on(2, {
    type: 'RunArtifactAdded',
    data: {
      run_id: 'r-1',
      artifact: {
        artifact_uid: 'a-1',
        artifact_type: 'EXTERNAL_REFERENCE',
        public: false,
        reference_type: 'linear_issue',
        url: 'https://linear.app/x/VIS-1',
      },
    },
  }),
  on(2, { type: 'RunUsageReported', data: { run_id: 'r-1', usage: { total_tokens: 12 } } }),
  on(2, handoff('r-1', 'x-1', 'h-1')),
  on(3, { type: 'RunInterruptRequested', data: { run_id: 'r-1', execution_id: 'x-1' } }),
  on(4, {
    type: 'RunFinished',
    data: { run_id: 'r-1', execution_id: 'x-1', state: 'SUCCEEDED', status_message: null },
  }),
  on(5, {
    type: 'RunFollowupDelivered',
    data: { run_id: 'r-1', execution_id: 'x-1', message: 'hm', mode: 'plan', attachments: [], to: 'execution' },
  }),
  on(6, { type: 'RunResumed', data: { run_id: 'r-1', message: 'one more thing', mode: null, attachments: [] } }),
  ...execution('r-1', 'x-2', 7),
  on(8, { type: 'RunCancelled', data: { run_id: 'r-1', reason: 'asked' } }, 30),
  ...execution('r-2', 'x-3', 9),
  on(10, { type: 'RunWorkerLost', data: { run_id: 'r-2', worker_id: 'w-1', requeued: false } }),
  on(10, created('r-3', { title: 'zeta', team_uid: null })),
  on(11, {
    type: 'RunLeased',
    data: { run_id: 'r-3', worker_id: 'w-9', execution_id: 'x-4', lease_expires_at: at(12) },
  }),
  on(12, { type: 'RunLeaseExpired', data: { run_id: 'r-3', worker_id: 'w-9' } }),
]);

describe('runs projection', () => {
  it('keeps sort keys and metadata pairs on every run', async () => {
    const docs = await project(runsProjection, history);
    expect(docs['r-1']).toMatchObject({
      agent_name: 'Reviewer',
      agent_key: 'reviewer',
      agent_missing: 0,
      title_key: 'fix the build',
    });
    expect(docs['r-1']!.metadata_pairs).toEqual(['ticket.id=VIS-1', 'automation_id=au-1']);
    expect(docs['r-2']).toMatchObject({ agent_name: 'lint', agent_key: 'lint', agent_missing: 0, ancestors: ['r-1'] });
    expect(docs['r-3']).toMatchObject({
      agent_name: null,
      agent_key: '',
      agent_missing: 1,
      title_key: 'zeta',
      metadata_pairs: [],
    });
  });

  it('adds up the time of every execution and remembers the one that ended last', async () => {
    const docs = await project(runsProjection, history);
    // x-1 ran from 00:01 to 00:04, x-2 from 00:07 to its cancellation at 00:08:30.
    expect(docs['r-1']).toMatchObject({
      state: 'CANCELLED',
      run_time_ms: 270_000,
      execution_started_at: null,
      ended_execution_id: 'x-2',
      finished_at: at(8, 30),
    });
    expect(docs['r-1']!.prompt).toBe('Fix it\n\nand the docs');
    // A lost worker ends its execution too.
    expect(docs['r-2']).toMatchObject({
      state: 'ERROR',
      run_time_ms: 60_000,
      ended_execution_id: 'x-3',
      status_message: { error_code: 'resource_unavailable' },
    });
    // A lease that expired never started anything.
    expect(docs['r-3']).toMatchObject({
      state: 'QUEUED',
      run_time_ms: 0,
      ended_execution_id: null,
      execution_id: null,
    });
  });

  it('keeps artifacts, external reference urls, usage and handoff files', async () => {
    const run = (await project(runsProjection, history))['r-1']!;
    expect(run).toMatchObject({
      artifact_types: ['EXTERNAL_REFERENCE'],
      external_reference_urls: ['https://linear.app/x/VIS-1'],
    });
    expect(run).toMatchObject({ usage: { total_tokens: 12 }, usage_reported_at: at(2) });
    expect(run.handoff_files).toEqual([
      expect.objectContaining({ attachment_id: 'h-1', execution_id: 'x-1', blob: 'blob-h-1' }),
    ]);
  });

  it('tells a root run’s task status from its whole tree', async () => {
    const upTo = async (n: number) => (await project(runsProjection, history.slice(0, n)))['r-1']!;
    const childCreated =
      history.findIndex((e) => e.type === 'RunCreated' && (e.data as RunCreatedData).run_id === 'r-2') + 1;
    const rootFinished = history.findIndex((e) => e.type === 'RunFinished') + 1;
    expect(await upTo(childCreated)).toMatchObject({ working: ['r-1', 'r-2'], task_status: 'running' });
    expect(await upTo(rootFinished)).toMatchObject({ state: 'SUCCEEDED', working: ['r-2'], task_status: 'running' });
    expect(await upTo(history.length)).toMatchObject({ working: [], task_status: 'cancelled' });
    expect((await project(runsProjection, history))['r-2']!.task_status).toBeNull();
  });
});

describe('run timeline projection', () => {
  it('lists setup and lifecycle entries in order, each with its execution', async () => {
    const timeline = (await project(runTimelineProjection, history))['r-1']!;
    const entries = timeline.entries as Array<{
      event_type: string;
      execution_id: string | null;
      occurred_at: string;
      payload: object;
    }>;
    expect(entries.map((e) => [e.event_type, e.execution_id])).toEqual([
      ['oz_run_created', null],
      ['followup_queued', null],
      ['run_leased', 'x-1'],
      ['oz_run_claimed', 'x-1'],
      ['agent_started', 'x-1'],
      ['worker_container_ready', 'x-1'],
      ['interrupt_requested', 'x-1'],
      ['oz_run_done', 'x-1'],
      ['followup_delivered', 'x-1'],
      ['run_resumed', null],
      ['run_leased', 'x-2'],
      ['oz_run_claimed', 'x-2'],
      ['agent_started', 'x-2'],
      ['oz_run_cancelled', 'x-2'],
    ]);
    expect(entries[0]).toMatchObject({ occurred_at: at(0), payload: { source: 'API' } });
    expect(entries[5]).toMatchObject({ occurred_at: at(1, 30), payload: { image: 'node' } });
    expect(entries[8]!.payload).toEqual({ to: 'execution', mode: 'plan' });
    expect(timeline.execution_id).toBeNull();
  });

  it('records a lost worker and an expired lease', async () => {
    const docs = await project(runTimelineProjection, history);
    expect((docs['r-2']!.entries as Array<{ event_type: string }>).map((e) => e.event_type)).toEqual([
      'oz_run_created',
      'run_leased',
      'oz_run_claimed',
      'agent_started',
      'worker_lost',
    ]);
    expect((docs['r-2']!.entries as Array<{ payload: object }>)[0]!.payload).toEqual({
      source: 'API',
      parent_run_id: 'r-1',
    });
    expect((docs['r-3']!.entries as Array<{ event_type: string }>).map((e) => e.event_type)).toEqual([
      'oz_run_created',
      'run_leased',
      'lease_expired',
    ]);
  });
});

describe.each([runsProjection, runTimelineProjection].map((p) => [p.name, p] as const))('%s projection', (_name, p) => {
  it('gives the same documents from the same events applied twice, or one at a time', async () => {
    const once = await project(p, history);
    expect(await project(p, history, { times: 2 })).toEqual(once);
    expect(await project(p, history, { batchSize: 1 })).toEqual(once);
  });
});
