/**
 * The run decider's guardrail decisions (issue #33): an admin approves or denies a run waiting
 * for approval, an approval that no one decided expires, and a run stuck or running too long
 * ends ERROR. Each decision is an event of the run an auditor reads (who, when, why).
 */
import type { DecideContext } from '../../src/kernel/decider.js';
import { Conflict, Forbidden } from '../../src/kernel/errors.js';
import { own } from '../../src/own-keys.js';
import type { RunApproval, RunEvent, RunState, StatusMessage } from './events.js';

export type GuardCommand =
  | { type: 'DecideApproval'; data: { run_id: string; approve: boolean; reason: string | null } }
  | { type: 'ExpireApproval'; data: { run_id: string } }
  | { type: 'TimeOutRun'; data: { run_id: string; rule: 'stuck' | 'max_duration'; status_message: StatusMessage } };

/** What these decisions read of the run (the decider's view). */
interface GuardedRun {
  run_id: string;
  state: RunState;
  team_uid: string | null;
  executing_team_uid: string;
  approval: RunApproval | null;
  held: { execution_id: string } | null;
}

function pending(run: GuardedRun): void {
  if (run.approval?.state !== 'pending' || run.state !== 'QUEUED')
    throw new Conflict(`run ${run.run_id} is not waiting for approval`, 'not_pending_approval');
}

export function guardEvents(run: GuardedRun, command: GuardCommand, context: DecideContext): RunEvent[] {
  const run_id = run.run_id;
  switch (command.type) {
    case 'DecideApproval': {
      const team = run.team_uid ?? run.executing_team_uid;
      if (context.actor.type !== 'user' || own(context.teams, team) !== 'admin')
        throw new Forbidden('only team admins can approve or deny runs');
      pending(run);
      const by = { type: 'user' as const, uid: context.actor.uid };
      if (command.data.approve) return [{ type: 'RunApproved', data: { run_id, by, at: context.now } }];
      const reason = command.data.reason;
      return [
        { type: 'RunDenied', data: { run_id, by, at: context.now, reason } },
        { type: 'RunCancelled', data: { run_id, reason: `denied by ${by.uid}${reason ? `: ${reason}` : ''}` } },
      ];
    }
    case 'ExpireApproval':
      if (run.approval?.state !== 'pending' || run.state !== 'QUEUED' || run.approval.expires_at > context.now)
        return [];
      return [
        { type: 'RunApprovalExpired', data: { run_id, at: context.now } },
        { type: 'RunCancelled', data: { run_id, reason: 'no one approved the run within its approval timeout' } },
      ];
    case 'TimeOutRun': {
      if (run.state !== 'INPROGRESS' || !run.held) return [];
      const execution_id = run.held.execution_id;
      return [
        { type: 'RunTimedOut', data: { run_id, execution_id, rule: command.data.rule } },
        {
          type: 'RunFinished',
          data: { run_id, execution_id, state: 'ERROR', status_message: command.data.status_message },
        },
      ];
    }
  }
}
