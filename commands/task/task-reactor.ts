/**
 * The task's reactions. Delivery is at least once, so each is safe to repeat: a dispatched run's
 * task has a uid derived from the RunCreated event and is created only when its stream is empty;
 * cancelling a run that is already terminal is refused by the run decider and skipped.
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { findEach } from '../../src/readstore/paging.js';
import { DomainError, Conflict } from '../../src/kernel/errors.js';
import { derivedId, reactionContext, reactor } from '../../src/projector/reactor.js';
import type { Runtime } from '../../src/runtime.js';
import { runsProjection, runDecider } from '../run/public.js';
import { conversationDecider } from '../conversation/public.js';
import { conversationStream } from '../conversation/events.js';
import { type RunEvent, runStream, TERMINAL_STATES } from '../run/events.js';
import { createTask, taskState } from './create.js';
import type { TaskEvent } from './events.js';

/** How often, and how far apart, a PENDING descendant is retried before the reactor retries. */
const PENDING_ATTEMPTS = 10;
const PENDING_PAUSE_MS = 200;

/** A refusal by the rules ends the reaction (logged); anything else makes the reactor retry. */
async function orSkip(rt: Runtime, event: RecordedEvent, what: string, action: () => Promise<unknown>): Promise<void> {
  try {
    await action();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    rt.log.warn({ event: event.id, code: error.code, detail: error.message }, `skipped: ${what}`);
  }
}

export const dispatchedTaskReactor = reactor<RunEvent, Runtime>({
  name: 'dispatched-task',
  replay: 'after-last-effect',
  on: {
    RunCreated: async (event, rt) => {
      const run = event.data;
      if (!run.factory_dispatch || !run.factory_uid) return;
      const uid = derivedId(event, 'factory-task');
      if ((await taskState(rt, uid)).status !== 'none') return;
      const context = reactionContext(event, rt.clock.now());
      await orSkip(rt, event, `task for dispatched run ${run.run_id}`, async () => {
        // createRun adds the run to its conversation right after RunCreated; adding it here too
        // (a no-op when already there) lets the task bind without waiting for that.
        await rt.execute(
          conversationStream(run.conversation_id),
          conversationDecider,
          {
            type: 'AddRun',
            data: {
              conversation_id: run.conversation_id,
              run_id: run.run_id,
              team_uid: run.team_uid,
              creator_uid: run.creator.uid,
            },
          },
          context,
        );
        await createTask(
          rt,
          {
            uid,
            factory_uid: run.factory_uid!,
            conversation_id: run.conversation_id,
            title: run.title,
            description: null,
            stage: 'TRIAGE',
          },
          context,
        );
      });
    },
  },
});

/** Cancels one run; a PENDING one is retried for a moment (its worker claims or loses it soon). */
async function cancelRun(rt: Runtime, event: RecordedEvent, runId: string, reason: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await rt.execute(
        runStream(runId),
        runDecider,
        { type: 'CancelRun', data: { run_id: runId, reason } },
        reactionContext(event, rt.clock.now()),
      );
      return;
    } catch (error) {
      if (error instanceof Conflict && attempt < PENDING_ATTEMPTS) {
        await new Promise((resolve) => setTimeout(resolve, PENDING_PAUSE_MS));
        continue;
      }
      // Still PENDING: throwing makes the reactor retry from its checkpoint, which is safe.
      if (error instanceof Conflict || !(error instanceof DomainError)) throw error;
      return; // terminal meanwhile, or a type the server cannot cancel
    }
  }
}

export const taskCancelReactor = reactor<TaskEvent, Runtime>({
  name: 'task-cancel',
  replay: 'after-last-effect',
  on: {
    TaskCancelled: async (event, rt) => {
      const root = event.data.run_id;
      const runs = rt.readModel(runsProjection);
      const reason = `task ${event.data.uid} cancelled`;
      const open = findEach(runs, {
        filter: { root_run_id: root, state: { $nin: TERMINAL_STATES } },
        sort: [['id', 'asc']],
        limit: 200,
      });
      for await (const run of open) if (run.run_id !== root) await cancelRun(rt, event, run.run_id, reason);
    },
  },
});
