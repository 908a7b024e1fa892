/**
 * The guardrail sweeper (one process of a store at a time, lease `guardrail_sweeper`), every
 * GUARDRAIL_SWEEP_SECONDS on the server's clock:
 * - an approval no one decided by its `expires_at` expires, cancelling its run;
 * - a run in progress that made no progress (timeline step, message, artifact, usage) for its
 *   `stuck_after_minutes`, or that runs past its `max_run_minutes`, ends ERROR saying which, and
 *   its worker is told to stop.
 * - a team whose runs waited GUARDRAIL_QUEUE_STALL_MINUTES in the queue with no worker connected
 *   gets one notice (`QueueStalled`), ended once a worker connects or nothing waits that long.
 * The run's stream decides each again, so a sweep that races the worker's own report changes
 * nothing it should not. A lost worker stays the worker sweeper's rule.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Service } from '../../src/feature.js';
import { timeOrderedId } from '../../src/ids.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { DomainError } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { type WatchedRunDoc, watchedRunsProjection } from '../../projections/guardrail/watched-runs.js';
import { type RunCommand, runDecider } from '../run/public.js';
import { runStream } from '../run/events.js';
import { liveWorkerCount } from '../worker/public.js';
import { queueStallStream } from './events.js';
import { queueStallDecider } from './queue-stall-decider.js';
import { limitsOfRun } from './approval-guard.js';
import type { EffectiveLimits } from './limits-decider.js';

const PAGE = 500;

const sweepContext = (teamUid: string, now: Date): CommandContext => ({
  now: now.toISOString(),
  actor: { type: 'system', uid: 'guardrail-sweeper' },
  teams: {},
  team_uid: teamUid,
  correlation_id: timeOrderedId(),
  causation_id: null,
  request_id: null,
});

const minutesAgo = (now: Date, minutes: number) => new Date(now.getTime() - minutes * 60_000).toISOString();

/** Why a run in progress must end now, if it must. */
function timeOut(run: WatchedRunDoc, limits: EffectiveLimits, now: Date): RunCommand | null {
  const status = (rule: 'stuck' | 'max_duration', message: string) => ({
    type: 'TimeOutRun' as const,
    data: { run_id: run.run_id, rule, status_message: { message, error_code: `run_${rule}`, retryable: true } },
  });
  if (run.progressed_at! <= minutesAgo(now, limits.stuck_after_minutes))
    return status('stuck', `The run made no progress for ${limits.stuck_after_minutes} minutes`);
  if (run.started_at! <= minutesAgo(now, limits.max_run_minutes))
    return status('max_duration', `The run ran past its maximum of ${limits.max_run_minutes} minutes`);
  return null;
}

async function decide(rt: Runtime, run: WatchedRunDoc, command: RunCommand, now: Date): Promise<void> {
  try {
    await rt.execute(
      runStream(run.run_id),
      runDecider,
      command,
      sweepContext(run.team_uid ?? run.executing_team_uid, now),
    );
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    rt.log.info({ run_id: run.run_id, err: error }, 'guardrail sweep: the run moved on meanwhile');
  }
}

/** Stalled queues: told once per team when they stall, and once when they no longer are. */
async function sweepQueues(rt: Runtime, now: Date): Promise<void> {
  const watched = rt.readModel(watchedRunsProjection);
  const cutoff = minutesAgo(now, rt.config.GUARDRAIL_QUEUE_STALL_MINUTES);
  const waiting = await watched.find({
    filter: { kind: 'queued', queued_at: { $lte: cutoff } },
    sort: [['queued_at', 'asc']],
    limit: PAGE,
  });
  const teams = new Map<string, { oldest_queued_at: string; queued_runs: number }>();
  for (const run of waiting.items) {
    const team = teams.get(run.executing_team_uid);
    if (team) team.queued_runs += 1;
    else teams.set(run.executing_team_uid, { oldest_queued_at: run.queued_at!, queued_runs: 1 });
  }
  const stalled = await watched.find({ filter: { kind: 'stall' }, sort: [['id', 'asc']], limit: PAGE });
  for (const team_uid of new Set([...teams.keys(), ...stalled.items.map((s) => s.executing_team_uid)])) {
    const waited = teams.get(team_uid);
    const stalls = waited !== undefined && (await liveWorkerCount(rt, team_uid)) === 0;
    const command = stalls
      ? { type: 'ReportStall' as const, data: { team_uid, ...waited } }
      : { type: 'EndStall' as const, data: { team_uid } };
    await rt.execute(queueStallStream(team_uid), queueStallDecider, command, sweepContext(team_uid, now));
  }
}

/** One sweep at the clock's now. */
export async function sweepGuardrails(rt: Runtime): Promise<void> {
  const now = rt.clock.now();
  await sweepQueues(rt, now);
  const watched = rt.readModel(watchedRunsProjection);
  const expired = await watched.find({
    filter: { kind: 'approval', expires_at: { $lte: now.toISOString() } },
    sort: [['expires_at', 'asc']],
    limit: PAGE,
  });
  for (const run of expired.items) await decide(rt, run, { type: 'ExpireApproval', data: { run_id: run.run_id } }, now);
  const limits = new Map<string, EffectiveLimits>();
  // The longest without progress first: a sweep past PAGE running runs looks at the likeliest stuck.
  const running = await watched.find({ filter: { kind: 'running' }, sort: [['progressed_at', 'asc']], limit: PAGE });
  for (const run of running.items) {
    const key = `${run.team_uid ?? run.executing_team_uid}/${run.factory_uid}`;
    const ofRun = limits.get(key) ?? (await limitsOfRun(rt, run));
    limits.set(key, ofRun);
    const command = timeOut(run, ofRun, now);
    if (command) await decide(rt, run, command, now);
  }
}

export function startGuardrailSweeper(rt: Runtime): Service {
  const every = rt.config.GUARDRAIL_SWEEP_SECONDS * 1000;
  const sweeper = rt.exclusive('guardrail_sweeper', async ({ signal }) => {
    while (!signal.aborted) {
      await delay(every, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) break;
      await sweepGuardrails(rt).catch((error: unknown) =>
        rt.log.error({ err: error }, 'guardrail sweep failed; retrying on the next tick'),
      );
    }
  });
  return { stop: () => sweeper.stop() };
}
