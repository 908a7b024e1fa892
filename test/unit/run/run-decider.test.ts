import { describe, expect, it } from 'vitest';
import { runDecider, type RunCommand } from '../../../commands/run/run-decider.js';
import { type RunCreatedData, type RunEvent, type StatusMessage, WORKER_LOST } from '../../../commands/run/events.js';
import { Conflict, InvalidRequest, NotFound, Unprocessable } from '../../../src/kernel/errors.js';
import { deciderSpec, fold, userContext } from '../../helpers/decider-spec.js';
import { runCreatedData } from '../../helpers/run-fixtures.js';
import { canView } from '../../../commands/run/resource.js';

const { given } = deciderSpec(runDecider);

const run_id = 'r-1';
const held = { worker_id: 'w-1', execution_id: 'x-1' };
const other = { worker_id: 'w-2', execution_id: 'x-2' };
const NOW = '2026-01-01T00:00:00.000Z';
const system = { now: NOW, actor: { type: 'system' as const, uid: 'sys' }, teams: {} };
const agentOf = (team: string) => ({
  now: NOW,
  actor: { type: 'agent' as const, uid: 'a-1' },
  teams: { [team]: 'member' as const },
});

const createdData = (fields: Partial<RunCreatedData> = {}): RunCreatedData =>
  runCreatedData(run_id, { conversation_id: 'c-1', ...fields });

const created = (fields: Partial<RunCreatedData> = {}): RunEvent => ({ type: 'RunCreated', data: createdData(fields) });
const leased: RunEvent = { type: 'RunLeased', data: { run_id, ...held, lease_expires_at: '2026-01-01T00:01:00.000Z' } };
const claimed: RunEvent = { type: 'RunClaimed', data: { run_id, ...held } };
const started: RunEvent = { type: 'RunStarted', data: { run_id, execution_id: held.execution_id } };
const finished = (
  state: 'SUCCEEDED' | 'FAILED' | 'ERROR' | 'BLOCKED',
  status_message: StatusMessage | null = null,
): RunEvent => ({
  type: 'RunFinished',
  data: { run_id, execution_id: held.execution_id, state, status_message },
});
const cancelled: RunEvent = { type: 'RunCancelled', data: { run_id, reason: 'asked' } };
const setupFailed = (until: string) =>
  finished('FAILED', { message: 'setup failed', error_code: 'environment_setup_failed', session_debug_until: until });

const queued = [created()];
const pending = [created(), leased];
const claimedRun = [created(), leased, claimed];
const running = [created(), leased, claimed, started];

const followup = (attachments: string[] = []): RunCommand => ({
  type: 'SendFollowup',
  data: { run_id, message: 'and the tests', mode: 'plan', attachments, execution_id: 'x-new' },
});
const cancel: RunCommand = { type: 'CancelRun', data: { run_id, reason: 'asked' } };
const worker = {
  lease: (h = held): RunCommand => ({
    type: 'LeaseRun',
    data: { run_id, ...h, lease_expires_at: '2026-01-01T00:01:00.000Z' },
  }),
  claim: (h = held): RunCommand => ({ type: 'ClaimRun', data: { run_id, ...h } }),
  start: (h = held): RunCommand => ({ type: 'StartRun', data: { run_id, ...h } }),
  timeline: (h = held): RunCommand => ({
    type: 'RecordTimeline',
    data: { run_id, ...h, name: 'worker_container_ready', detail: { image: 'node' } },
  }),
  message: (h = held): RunCommand => ({
    type: 'RecordMessage',
    data: {
      run_id,
      ...h,
      message_id: 'm-1',
      step_id: null,
      parent_step_id: null,
      role: 'assistant',
      content: [{ type: 'text', text: 'hi' }],
    },
  }),
  artifact: (h = held): RunCommand => ({
    type: 'AddArtifact',
    data: {
      run_id,
      ...h,
      artifact: {
        artifact_uid: 'art-1',
        artifact_type: 'PULL_REQUEST',
        public: false,
        url: 'https://x/pr/1',
        branch: 'b',
      },
    },
  }),
  usage: (h = held): RunCommand => ({ type: 'ReportUsage', data: { run_id, ...h, usage: { total_tokens: 10 } } }),
  handoff: (h = held): RunCommand => ({
    type: 'AddHandoffFile',
    data: {
      run_id,
      ...h,
      attachment: {
        attachment_id: 'h-1',
        file_name: 'state.tar',
        mime_type: 'application/x-tar',
        size_bytes: 3,
        blob: 'b-1',
      },
    },
  }),
  finish: (h = held): RunCommand => ({
    type: 'FinishRun',
    data: { run_id, ...h, state: 'SUCCEEDED', status_message: null },
  }),
};

describe('run decider: creating and seeing a run', () => {
  it('creates a run once', () => {
    given([])
      .when({ type: 'CreateRun', data: createdData() })
      .then([{ type: 'RunCreated', data: { run_id, title: 'Fix' } }]);
    given(queued).when({ type: 'CreateRun', data: createdData() }).thenThrows(Conflict);
  });

  it('answers every other command on a missing run with 404', () => {
    given([]).when(cancel).thenThrows(NotFound);
    given([]).when(worker.lease(), system).thenThrows(NotFound);
  });

  it('shows a team run to its team, a personal run to its creator, executing-team agents and the system', () => {
    const run = fold(runDecider, queued);
    const personal = fold(runDecider, [created({ team_uid: null })]);
    if (run.status !== 'live' || personal.status !== 'live') throw new Error('not created');
    expect(canView(run, userContext('u-2', { 't-1': 'member' }))).toBe(true);
    expect(canView(run, userContext('u-1', { 't-2': 'admin' }))).toBe(false);
    expect(canView(personal, userContext('u-1', { 't-1': 'admin' }))).toBe(true);
    expect(canView(personal, userContext('u-2', { 't-1': 'admin' }))).toBe(false);
    expect(canView(personal, agentOf('t-1'))).toBe(true);
    expect(canView(run, agentOf('t-2'))).toBe(false);
    expect(canView(run, system)).toBe(true);
  });

  it('refuses commands on a run the caller cannot see as if it did not exist', () => {
    given(queued)
      .when(cancel, userContext('u-9', { 't-9': 'admin' }))
      .thenThrows(NotFound);
    given([created({ team_uid: null })])
      .when(followup(), userContext('u-2', { 't-1': 'admin' }))
      .thenThrows(NotFound);
  });
});

describe('run decider: follow-ups are routed by state', () => {
  it('joins the prompt of a run that is queued or being handed to a worker', () => {
    for (const history of [queued, pending]) {
      given(history)
        .when(followup())
        .then([{ type: 'RunPromptExtended', data: { run_id, message: 'and the tests', mode: 'plan' } }]);
    }
  });

  it('is delivered to the live execution of a claimed or running run', () => {
    for (const history of [claimedRun, running]) {
      given(history)
        .when(followup())
        .then([
          {
            type: 'RunFollowupDelivered',
            data: { execution_id: held.execution_id, to: 'execution', message: 'and the tests' },
          },
        ]);
    }
  });

  it('resumes an ended run in a new execution', () => {
    for (const end of [finished('SUCCEEDED'), finished('ERROR'), finished('BLOCKED'), finished('FAILED')]) {
      given([...running, end])
        .when(followup())
        .then([{ type: 'RunResumed', data: { run_id, message: 'and the tests', mode: 'plan' } }]);
    }
    given([...queued, cancelled])
      .when(followup())
      .then([{ type: 'RunResumed' }]);
  });

  it('goes to the retained debug session of a setup failure inside its window, else resumes', () => {
    given([...claimedRun, setupFailed('2026-01-01T00:10:00.000Z')])
      .when(followup())
      .then([{ type: 'RunFollowupDelivered', data: { execution_id: 'x-new', to: 'debug_session' } }]);
    given([...claimedRun, setupFailed('2025-12-31T23:59:00.000Z')])
      .when(followup())
      .then([{ type: 'RunResumed' }]);
    given([
      ...claimedRun,
      finished('FAILED', {
        message: 'tests failed',
        error_code: 'invalid_request',
        session_debug_until: '2026-01-02T00:00:00.000Z',
      }),
    ])
      .when(followup())
      .then([{ type: 'RunResumed' }]);
  });

  it('keeps the state, message and code of a setup failure whose follow-up went to the debug session', () => {
    const history = [...claimedRun, setupFailed('2026-01-01T00:10:00.000Z')];
    const [delivered] = runDecider.decide(followup(), fold(runDecider, history), userContext());
    const after = fold(runDecider, [...history, delivered!]);
    expect(after).toMatchObject({
      state: 'FAILED',
      status_message: { message: 'setup failed', error_code: 'environment_setup_failed' },
    });
  });

  it('names only attachments prepared for the run', () => {
    const prepared: RunEvent = {
      type: 'RunAttachmentPrepared',
      data: {
        run_id,
        attachment: { attachment_id: 'att-1', file_name: 'a.png', mime_type: 'image/png', size_bytes: 1, blob: 'b' },
      },
    };
    given([...running, prepared])
      .when(followup(['att-1']))
      .then([{ type: 'RunFollowupDelivered', data: { attachments: ['att-1'] } }]);
    given(running)
      .when(followup(['att-1']))
      .thenThrows(Unprocessable, /not prepared/);
  });
});

describe('run decider: cancel and interrupt', () => {
  it('cancels a queued, claimed or running run', () => {
    for (const history of [queued, claimedRun, running])
      given(history)
        .when(cancel)
        .then([{ type: 'RunCancelled', data: { run_id, reason: 'asked' } }]);
  });

  it('refuses a run that has ended (400), one being handed to a worker (409, retryable), one of a type the server cannot stop (422)', () => {
    for (const end of [finished('SUCCEEDED'), finished('FAILED'), finished('ERROR'), finished('BLOCKED'), cancelled]) {
      given([...running, end])
        .when(cancel)
        .thenThrows(InvalidRequest);
    }
    given(pending).when(cancel).thenThrows(Conflict);
    let error: unknown;
    try {
      runDecider.decide(cancel, fold(runDecider, pending), userContext());
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ status: 409, code: 'conflict', retryable: true });
    given([created({ source: 'GITHUB_ACTION' })])
      .when(cancel)
      .thenThrows(Unprocessable);
    given([created({ execution_location: 'LOCAL' })])
      .when(cancel)
      .thenThrows(Unprocessable);
  });

  it('interrupts the live turn of a running run, and does nothing otherwise', () => {
    given(running)
      .when({ type: 'InterruptRun', data: { run_id } })
      .then([{ type: 'RunInterruptRequested', data: { run_id, execution_id: held.execution_id } }]);
    for (const history of [queued, pending, claimedRun, [...running, finished('SUCCEEDED')]]) {
      given(history).when({ type: 'InterruptRun', data: { run_id } }).thenNothingHappened();
    }
  });
});

describe('run decider: the worker protocol', () => {
  it('leases only a queued run', () => {
    given(queued)
      .when(worker.lease(), system)
      .then([{ type: 'RunLeased', data: { run_id, ...held } }]);
    given(pending)
      .when(worker.lease(other), system)
      .thenThrows(Conflict, /not queued/);
  });

  it('expires the lease of the worker that holds a pending run, and nothing else', () => {
    given(pending)
      .when({ type: 'ExpireLease', data: { run_id, worker_id: 'w-1' } }, system)
      .then([{ type: 'RunLeaseExpired', data: { worker_id: 'w-1' } }]);
    given(pending)
      .when({ type: 'ExpireLease', data: { run_id, worker_id: 'w-2' } }, system)
      .thenNothingHappened();
    given(claimedRun)
      .when({ type: 'ExpireLease', data: { run_id, worker_id: 'w-1' } }, system)
      .thenNothingHappened();
  });

  it('queues a run again when its lease expires, so another worker may lease it', () => {
    given([...pending, { type: 'RunLeaseExpired', data: { run_id, worker_id: 'w-1' } }])
      .when(worker.lease(other), system)
      .then([{ type: 'RunLeased' }]);
  });

  it('claims a pending run for the execution that leased it, then starts it', () => {
    given(pending)
      .when(worker.claim(), system)
      .then([{ type: 'RunClaimed', data: held }]);
    given(pending)
      .when(worker.claim(other), system)
      .thenThrows(Conflict, /not held/);
    given(claimedRun)
      .when(worker.start(), system)
      .then([{ type: 'RunStarted', data: { execution_id: held.execution_id } }]);
    given(pending).when(worker.start(), system).thenThrows(Conflict);
    given(running).when(worker.claim(), system).thenThrows(Conflict);
  });

  it('records timeline entries and usage from a claimed or running execution', () => {
    for (const history of [claimedRun, running]) {
      given(history)
        .when(worker.timeline(), system)
        .then([{ type: 'RunTimelineRecorded', data: { name: 'worker_container_ready', detail: { image: 'node' } } }]);
      given(history)
        .when(worker.usage(), system)
        .then([{ type: 'RunUsageReported', data: { usage: { total_tokens: 10 } } }]);
    }
    given(pending).when(worker.timeline(), system).thenThrows(Conflict);
    given(pending).when(worker.usage(), system).thenThrows(Conflict);
  });

  it('records messages, artifacts and handoff files from a running execution only', () => {
    given(running)
      .when(worker.message(), system)
      .then([{ type: 'RunMessageRecorded', data: { conversation_id: 'c-1', message_id: 'm-1' } }]);
    given(running)
      .when(worker.artifact(), system)
      .then([{ type: 'RunArtifactAdded', data: { artifact: expect.objectContaining({ artifact_uid: 'art-1' }) } }]);
    given(running)
      .when(worker.handoff(), system)
      .then([
        {
          type: 'RunHandoffFileAdded',
          data: { execution_id: held.execution_id, attachment: expect.objectContaining({ attachment_id: 'h-1' }) },
        },
      ]);
    for (const command of [worker.message(), worker.artifact(), worker.handoff()])
      given(claimedRun).when(command, system).thenThrows(Conflict);
    for (const command of [worker.message(other), worker.artifact(other), worker.handoff(other)])
      given(running).when(command, system).thenThrows(Conflict);
  });

  it('finishes a claimed or running execution, after which it holds nothing', () => {
    for (const history of [claimedRun, running])
      given(history)
        .when(worker.finish(), system)
        .then([{ type: 'RunFinished', data: { state: 'SUCCEEDED', execution_id: held.execution_id } }]);
    given(running).when(worker.finish(other), system).thenThrows(Conflict);
    given([...running, finished('SUCCEEDED')])
      .when(worker.finish(), system)
      .thenThrows(Conflict);
    given([...running, finished('SUCCEEDED')])
      .when(worker.usage(), system)
      .thenThrows(Conflict);
  });

  it('requeues a run whose worker is lost before it started, and errs one that was running', () => {
    const lose: RunCommand = { type: 'LoseWorker', data: { run_id, worker_id: 'w-1' } };
    given(pending)
      .when(lose, system)
      .then([{ type: 'RunWorkerLost', data: { worker_id: 'w-1', requeued: true } }]);
    given(claimedRun)
      .when(lose, system)
      .then([{ type: 'RunWorkerLost', data: { requeued: true } }]);
    given(running)
      .when(lose, system)
      .then([{ type: 'RunWorkerLost', data: { requeued: false } }]);
    given(running)
      .when({ type: 'LoseWorker', data: { run_id, worker_id: 'w-2' } }, system)
      .thenNothingHappened();
    given(queued).when(lose, system).thenNothingHappened();
    const lost = fold(runDecider, [
      ...running,
      { type: 'RunWorkerLost', data: { run_id, worker_id: 'w-1', requeued: false } },
    ]);
    expect(lost).toMatchObject({ state: 'ERROR', held: null, status_message: WORKER_LOST });
    expect(
      fold(runDecider, [...claimedRun, { type: 'RunWorkerLost', data: { run_id, worker_id: 'w-1', requeued: true } }]),
    ).toMatchObject({ state: 'QUEUED', held: null });
  });

  it('queues a resumed run again with its status message cleared', () => {
    const history: RunEvent[] = [
      ...running,
      finished('FAILED', { message: 'no' }),
      { type: 'RunResumed', data: { run_id, message: 'again', mode: null, attachments: [] } },
    ];
    expect(fold(runDecider, history)).toMatchObject({ state: 'QUEUED', status_message: null, held: null });
    given(history)
      .when(worker.lease(other), system)
      .then([{ type: 'RunLeased', data: other }]);
  });
});
