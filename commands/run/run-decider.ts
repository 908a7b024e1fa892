import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import { Conflict, InvalidRequest, NotFound, Unprocessable } from '../../src/kernel/errors.js';
import { canView, isCancellableType, isTerminal } from './resource.js';
import {
  type Artifact,
  type Attachment,
  type FinishState,
  type RunCreatedData,
  type RunEvent,
  type RunMode,
  type RunQuestion,
  type RunState,
  type StatusMessage,
  WORKER_LOST,
  HELD_STATES,
  nextApproval,
  nextRunState,
  type ApprovalRule,
  type RunApproval,
} from './events.js';
import { own, ownsKey } from '../../src/own-keys.js';
import { type GuardCommand, guardEvents } from './run-guard-decisions.js';

type Held = { worker_id: string; execution_id: string };

export type RunCommand =
  /** `artifacts`: what the run starts with (an automation's event payload), recorded with its creation. */
  | {
      type: 'CreateRun';
      data: RunCreatedData;
      artifacts?: Artifact[];
      /** The run waits for a team admin's approval (guardrails). */
      approval?: { rule: ApprovalRule; expires_at: string };
    }
  | GuardCommand
  | {
      type: 'SendFollowup';
      data: { run_id: string; message: string; mode: RunMode | null; attachments: string[]; execution_id: string };
    }
  | { type: 'CancelRun'; data: { run_id: string; reason: string } }
  | { type: 'InterruptRun'; data: { run_id: string } }
  | { type: 'PrepareAttachment'; data: { run_id: string; attachment: Attachment } }
  | { type: 'LeaseRun'; data: Held & { run_id: string; lease_expires_at: string } }
  | { type: 'ExpireLease'; data: { run_id: string; worker_id: string } }
  | { type: 'ClaimRun'; data: Held & { run_id: string } }
  | { type: 'StartRun'; data: Held & { run_id: string } }
  | { type: 'RecordTimeline'; data: Held & { run_id: string; name: string; detail: Record<string, unknown> } }
  | {
      type: 'RecordMessage';
      data: Held & {
        run_id: string;
        message_id: string;
        step_id: string | null;
        parent_step_id: string | null;
        role: string;
        content: unknown[];
      };
    }
  | { type: 'AddArtifact'; data: Held & { run_id: string; artifact: Artifact } }
  | { type: 'AskQuestion'; data: Held & { run_id: string; ask_id: string; questions: RunQuestion[] } }
  | { type: 'ReportUsage'; data: Held & { run_id: string; usage: Record<string, unknown> } }
  | { type: 'AddHandoffFile'; data: Held & { run_id: string; attachment: Attachment } }
  | { type: 'FinishRun'; data: Held & { run_id: string; state: FinishState; status_message: StatusMessage | null } }
  | { type: 'LoseWorker'; data: { run_id: string; worker_id: string } };

/** What the execution holding the run is given: this turn's prompt and files. */
type Turn = { prompt: string; mode: RunMode; resumed: boolean; attachments: Attachment[] };

export type RunView = {
  status: 'live';
  created: RunCreatedData;
  run_id: string;
  state: RunState;
  team_uid: string | null;
  executing_team_uid: string;
  creator_uid: string;
  conversation_id: string;
  root_run_id: string;
  depth: number;
  cancellable_type: boolean;
  /** The execution a worker holds, if any; a lease runs out unless the worker claims it. */
  held: (Held & { lease_expires_at: string | null }) | null;
  status_message: StatusMessage | null;
  /**
   * The prompt of the next or current execution: the run's prompt with the follow-ups that joined
   * it while queued; after a resume, the follow-up that started it, with its attachments.
   */
  turn: Turn;
  /** Attachments prepared for this run, by id: the only ones its follow-ups may name. */
  prepared: Record<string, Attachment>;
  /** Questions asked and not yet answered: a follow-up answers them, and an end other than BLOCKED drops them. */
  open_questions: Array<{ ask_id: string; questions: RunQuestion[] }>;
  /** Its approval, when one was asked for; pending, it is never handed to a worker. */
  approval: RunApproval | null;
};

export type RunDeciderState = { status: 'none' } | RunView;

function visible(state: RunDeciderState, runId: string, context: DecideContext): RunView {
  if (state.status !== 'live' || !canView(state, context)) throw new NotFound('run', runId);
  return state;
}

/** Worker reports must come from the execution that holds the run. */
function heldBy(run: RunView, held: Held, states: readonly RunState[]): void {
  if (
    !run.held ||
    run.held.worker_id !== held.worker_id ||
    run.held.execution_id !== held.execution_id ||
    !states.includes(run.state)
  ) {
    throw new Conflict(`run ${run.run_id} is not held by this execution (state ${run.state})`, 'not_claimed');
  }
}

const joined = (prompt: string, message: string) => (prompt ? `${prompt}\n\n${message}` : message);

const createdView = (d: RunCreatedData): RunView => ({
  status: 'live',
  created: d,
  run_id: d.run_id,
  state: 'QUEUED',
  team_uid: d.team_uid,
  executing_team_uid: d.executing_team_uid,
  creator_uid: d.creator.uid,
  conversation_id: d.conversation_id,
  root_run_id: d.root_run_id,
  depth: d.depth,
  cancellable_type: isCancellableType(d),
  held: null,
  status_message: null,
  turn: { prompt: d.prompt, mode: d.mode, resumed: false, attachments: d.attachments },
  prepared: {},
  open_questions: [],
  approval: null,
});

/** The run moved to the state `event` leads to; no worker holds a run outside the held states. */
function moved(run: RunView, event: RunEvent): RunView {
  const state = nextRunState(run.state, event);
  if (state === run.state) return run;
  return { ...run, state, held: HELD_STATES.includes(state) ? run.held : null };
}

export const runDecider: Decider<RunCommand, RunEvent, RunDeciderState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    if (event.type === 'RunCreated') return createdView(event.data);
    if (state.status !== 'live') return state;
    const run = { ...moved(state, event), approval: nextApproval(state.approval ?? null, event) };
    switch (event.type) {
      case 'RunLeased': {
        const { worker_id, execution_id, lease_expires_at } = event.data;
        return { ...run, held: { worker_id, execution_id, lease_expires_at } };
      }
      case 'RunClaimed':
        return { ...run, held: run.held && { ...run.held, lease_expires_at: null } };
      case 'RunFinished':
        return {
          ...run,
          status_message: event.data.status_message,
          open_questions: event.data.state === 'BLOCKED' ? run.open_questions : [],
        };
      case 'RunCancelled':
        return { ...run, open_questions: [] };
      case 'RunWorkerLost':
        return event.data.requeued ? run : { ...run, status_message: WORKER_LOST, open_questions: [] };
      case 'RunQuestionAsked': {
        const { ask_id, questions } = event.data;
        return { ...run, open_questions: [...run.open_questions, { ask_id, questions }] };
      }
      case 'RunFollowupDelivered':
        return { ...run, open_questions: [] };
      case 'RunPromptExtended': {
        const { message, mode } = event.data;
        return {
          ...run,
          open_questions: [],
          turn: { ...run.turn, prompt: joined(run.turn.prompt, message), mode: mode ?? run.turn.mode },
        };
      }
      case 'RunResumed': {
        const { message, mode, attachments } = event.data;
        const files = attachments.flatMap((id) => own(run.prepared, id) ?? []);
        return {
          ...run,
          status_message: null,
          open_questions: [],
          turn: { prompt: message, mode: mode ?? run.turn.mode, resumed: true, attachments: files },
        };
      }
      case 'RunAttachmentPrepared': {
        const { attachment } = event.data;
        return { ...run, prepared: { ...run.prepared, [attachment.attachment_id]: attachment } };
      }
      default:
        return run;
    }
  },

  decide: (command, state, context) => {
    if (command.type === 'CreateRun') {
      if (state.status !== 'none') throw new Conflict(`run ${command.data.run_id} exists`);
      const run_id = command.data.run_id;
      const approval = command.approval;
      return [
        { type: 'RunCreated', data: command.data },
        ...(command.artifacts ?? []).map((artifact) => ({
          type: 'RunArtifactAdded' as const,
          data: { run_id, artifact },
        })),
        ...(approval
          ? [{ type: 'RunApprovalRequested' as const, data: { run_id, ...approval, requested_at: context.now } }]
          : []),
      ];
    }
    const run = visible(state, command.data.run_id, context);
    const run_id = run.run_id;
    switch (command.type) {
      case 'SendFollowup':
        return followupEvents(run, command.data, context);
      case 'CancelRun':
        if (!run.cancellable_type) throw new Unprocessable('this type of run cannot be cancelled on the server');
        if (isTerminal(run.state))
          throw new InvalidRequest(`run ${run_id} has already ended (${run.state})`, undefined, 'invalid_request');
        if (run.state === 'PENDING')
          throw new Conflict('the run is being handed to a worker; retry in a moment', 'conflict', true);
        return [{ type: 'RunCancelled', data: { run_id, reason: command.data.reason } }];
      case 'InterruptRun':
        return run.state === 'INPROGRESS' && run.held
          ? [{ type: 'RunInterruptRequested', data: { run_id, execution_id: run.held.execution_id } }]
          : [];
      case 'PrepareAttachment':
        return [{ type: 'RunAttachmentPrepared', data: { run_id, attachment: command.data.attachment } }];
      case 'DecideApproval':
      case 'ExpireApproval':
      case 'TimeOutRun':
        return guardEvents(run, command, context);
      default:
        return workerEvents(run, command);
    }
  },
};

type FollowupData = Extract<RunCommand, { type: 'SendFollowup' }>['data'];

/**
 * Where a follow-up goes: into the prompt of a run not yet running, to the execution holding it,
 * to the debug session of a run whose environment setup failed, else it resumes the ended run.
 */
function followupEvents(run: RunView, data: FollowupData, context: DecideContext): RunEvent[] {
  const run_id = run.run_id;
  const { message, mode, attachments, execution_id } = data;
  // Own keys only: `constructor` was never prepared.
  const unknown = attachments.filter((id) => !ownsKey(run.prepared, id));
  if (unknown.length)
    throw new Unprocessable(
      `attachments not prepared for run ${run_id}: ${unknown.join(', ')}; prepare them again`,
      'unknown_attachment',
    );
  switch (followupRoute(run, context.now)) {
    case 'queued_prompt':
      return [{ type: 'RunPromptExtended', data: { run_id, message, mode } }];
    case 'live_execution':
      return [
        {
          type: 'RunFollowupDelivered',
          data: { run_id, execution_id: run.held!.execution_id, message, mode, attachments, to: 'execution' },
        },
      ];
    case 'debug_session':
      return [
        {
          type: 'RunFollowupDelivered',
          data: { run_id, execution_id, message, mode, attachments, to: 'debug_session' },
        },
      ];
    case 'new_execution':
      return [{ type: 'RunResumed', data: { run_id, message, mode, attachments } }];
  }
}

/**
 * Where a follow-up to `run` goes now: the prompt of a run not yet running, the execution holding
 * it, the retained debug session of a failed environment setup, else a new execution (a resume).
 */
export function followupRoute(
  run: RunView,
  now: string,
): 'queued_prompt' | 'live_execution' | 'debug_session' | 'new_execution' {
  if (run.state === 'QUEUED' || run.state === 'PENDING') return 'queued_prompt';
  if (run.held && (run.state === 'CLAIMED' || run.state === 'INPROGRESS')) return 'live_execution';
  const debug = run.status_message;
  if (
    run.state === 'FAILED' &&
    debug?.error_code === 'environment_setup_failed' &&
    debug.session_debug_until &&
    debug.session_debug_until > now
  )
    return 'debug_session';
  return 'new_execution';
}

/** The commands of the execution that holds the run, and of the claims and sweeps around it. */
type WorkerCommand = Exclude<
  RunCommand,
  {
    type:
      | 'CreateRun'
      | 'SendFollowup'
      | 'CancelRun'
      | 'InterruptRun'
      | 'PrepareAttachment'
      | 'DecideApproval'
      | 'ExpireApproval'
      | 'TimeOutRun';
  }
>;

function workerEvents(run: RunView, command: WorkerCommand): RunEvent[] {
  const run_id = run.run_id;
  switch (command.type) {
    case 'LeaseRun':
      if (run.state !== 'QUEUED' || run.approval?.state === 'pending')
        throw new Conflict(`run ${run_id} is not queued`, 'not_queued');
      return [{ type: 'RunLeased', data: command.data }];
    case 'ExpireLease':
      return run.state === 'PENDING' && run.held?.worker_id === command.data.worker_id
        ? [{ type: 'RunLeaseExpired', data: command.data }]
        : [];
    case 'ClaimRun':
      heldBy(run, command.data, ['PENDING']);
      return [{ type: 'RunClaimed', data: command.data }];
    case 'StartRun':
      heldBy(run, command.data, ['CLAIMED']);
      return [{ type: 'RunStarted', data: { run_id, execution_id: command.data.execution_id } }];
    case 'RecordTimeline':
      heldBy(run, command.data, ['CLAIMED', 'INPROGRESS']);
      return [{ type: 'RunTimelineRecorded', data: { run_id, name: command.data.name, detail: command.data.detail } }];
    case 'RecordMessage': {
      heldBy(run, command.data, ['INPROGRESS']);
      const { message_id, step_id, parent_step_id, role, content } = command.data;
      return [
        {
          type: 'RunMessageRecorded',
          data: { run_id, conversation_id: run.conversation_id, message_id, step_id, parent_step_id, role, content },
        },
      ];
    }
    case 'AddArtifact':
      heldBy(run, command.data, ['INPROGRESS']);
      return [{ type: 'RunArtifactAdded', data: { run_id, artifact: command.data.artifact } }];
    case 'AskQuestion': {
      heldBy(run, command.data, ['INPROGRESS']);
      const { ask_id, questions } = command.data;
      if (run.open_questions.some((q) => q.ask_id === ask_id)) return [];
      return [{ type: 'RunQuestionAsked', data: { run_id, ask_id, questions } }];
    }
    case 'ReportUsage':
      heldBy(run, command.data, ['CLAIMED', 'INPROGRESS']);
      return [{ type: 'RunUsageReported', data: { run_id, usage: command.data.usage } }];
    case 'AddHandoffFile':
      heldBy(run, command.data, ['INPROGRESS']);
      return [
        {
          type: 'RunHandoffFileAdded',
          data: { run_id, execution_id: command.data.execution_id, attachment: command.data.attachment },
        },
      ];
    case 'FinishRun':
      heldBy(run, command.data, ['CLAIMED', 'INPROGRESS']);
      return [
        {
          type: 'RunFinished',
          data: {
            run_id,
            execution_id: command.data.execution_id,
            state: command.data.state,
            status_message: command.data.status_message,
          },
        },
      ];
    case 'LoseWorker':
      if (!run.held || run.held.worker_id !== command.data.worker_id || isTerminal(run.state)) return [];
      return [
        {
          type: 'RunWorkerLost',
          data: { run_id, worker_id: command.data.worker_id, requeued: run.state !== 'INPROGRESS' },
        },
      ];
  }
}
