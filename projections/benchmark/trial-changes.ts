/**
 * How an event changes a trial of the benchmark runs read model, once per event: the trial, its
 * attempt, and the difference of its tally carried to its cell and its run.
 */
import { positionKey, type RecordedEvent } from '../../src/eventstore/port.js';
import { own } from '../../src/own-keys.js';
import type { AttemptDoc, Docs, TrialDoc, TrialScoreDoc } from './benchmark-run-docs.js';
import { addTally, NO_COST, tallyOf } from './tallies.js';

export const cellKey = (runUid: string, taskUid: string, configurationUid: string) =>
  `${runUid}|${taskUid}|${configurationUid}`;

/**
 * Changes one trial, once per event: its tally's difference goes to its cell and its run.
 * `change` returns the trial as it is after the event (or null to leave it).
 */
export async function touchTrial(docs: Docs, e: RecordedEvent, uid: string, change: (t: TrialDoc) => TrialDoc | null) {
  const trials = docs.in('trials');
  const trial = await trials.get(uid);
  const position = positionKey(e.position);
  if (!trial || trial.position >= position) return;
  const changed = change(trial);
  if (!changed) return;
  const next: TrialDoc = { ...changed, position, updated_at: e.metadata.occurred_at };
  trials.put(uid, next);
  const delta = addTally(tallyOf(next), tallyOf(trial), -1);
  const cells = docs.in('cells');
  const key = cellKey(trial.benchmark_run_uid, trial.task_uid, trial.configuration_uid);
  const cell = await cells.get(key);
  if (cell) cells.put(key, { ...cell, tally: addTally(cell.tally, delta) });
  const run = await docs.get(trial.benchmark_run_uid);
  if (run) {
    const current = own(run.by_configuration, trial.configuration_uid);
    if (current)
      docs.patch(run.uid, {
        by_configuration: { ...run.by_configuration, [trial.configuration_uid]: addTally(current, delta) },
        updated_at: e.metadata.occurred_at,
      });
  }
}

/** The trial of an agent run that is one of its attempts (null for other runs). */
export async function trialOfRun(docs: Docs, runId: string) {
  return docs.in('agent_runs').get(runId);
}

/** Changes the attempt of `runId` (when it is one of a trial's), and the trial with it. */
export async function touchAttempt(
  docs: Docs,
  e: RecordedEvent,
  runId: string,
  change: (a: AttemptDoc, t: TrialDoc) => { attempt: Partial<AttemptDoc>; trial?: Partial<TrialDoc> },
) {
  const link = await trialOfRun(docs, runId);
  if (!link) return;
  await touchTrial(docs, e, link.trial_uid, (t) => {
    const attempt = t.attempts.find((a) => a.run_id === runId);
    if (!attempt) return null;
    const c = change(attempt, t);
    return {
      ...t,
      ...c.trial,
      attempts: t.attempts.map((a) => (a.run_id === runId ? { ...a, ...c.attempt } : a)),
    };
  });
}

export const executing = (t: TrialDoc) => t.state === 'pending' || t.state === 'running';

/** The open execution of an attempt closed at `at`. */
export const endOf = (a: AttemptDoc, at: string, state: string): Partial<AttemptDoc> => ({
  state,
  finished_at: at,
  run_time_ms: a.run_time_ms + (a.execution_started_at ? Date.parse(at) - Date.parse(a.execution_started_at) : 0),
  execution_started_at: null,
});

export const newAttempt = (attempt_number: number, run_id: string): AttemptDoc => ({
  attempt_number,
  run_id,
  state: 'QUEUED',
  started_at: null,
  finished_at: null,
  run_time_ms: 0,
  execution_started_at: null,
  cost: NO_COST,
  credits: NO_COST,
});

export const unscoreable = (t: TrialDoc, error: string | null = null): TrialScoreDoc[] =>
  t.scores.map((s) =>
    s.status === 'awaiting_trial'
      ? { ...s, status: 'not_scoreable', error }
      : s.status === 'judging'
        ? { ...s, status: 'finished_unscored', error }
        : s,
  );
