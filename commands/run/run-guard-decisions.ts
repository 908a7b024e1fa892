/**
 * The run decider's guardrail decisions (issue #33): an admin approves or denies a run waiting
 * for approval, an approval that no one decided expires, and a run stuck or running too long
 * ends ERROR. Each decision is an event of the run an auditor reads (who, when, why).
 */
import type { DecideContext } from '../../src/kernel/decider.js';
import { Conflict, Forbidden } from '../../src/kernel/errors.js';
import type { RunCommand, RunView } from './run-decider.js';
import type { RunEvent } from './events.js';

type GuardCommand = Extract<RunCommand, { type: 'DecideApproval' | 'ExpireApproval' | 'TimeOutRun' }>;

function pending(run: RunView): void {
  if (run.approval?.state !== 'pending' || run.state !== 'QUEUED')
    throw new Conflict(`run ${run.run_id} is not waiting for approval`, 'not_pending_approval');
}

export function guardEvents(run: RunView, command: GuardCommand, context: DecideContext): RunEvent[] {
  const run_id = run.run_id;
  switch (command.type) {
    case 'DecideApproval': {
      const team = run.team_uid ?? run.executing_team_uid;
      if (context.actor.type !== 'user' || context.teams[team] !== 'admin')
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
