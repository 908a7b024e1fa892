/**
 * A launched benchmark run in its read model: the run document with the tally of each
 * configuration, a trial per plan (its first attempt pending), each trial's cell, and the link
 * from each first attempt's agent run to its trial.
 */
import { positionKey, type RecordedEvent } from '../../src/eventstore/port.js';
import { own, ownsKey, putOwn } from '../../src/own-keys.js';
import type {
  BenchmarkRunEvent,
  RunConfiguration,
  RunLaunchedData,
  RunTask,
  TrialPlan,
} from '../../commands/benchmark/events.js';
import type { BenchmarkRunDoc, Docs, TrialDoc } from './benchmark-run-docs.js';
import { addTally, type Tally, tallyOf } from './tallies.js';
import { cellKey, newAttempt } from './trial-changes.js';

type Launched = RecordedEvent<Extract<BenchmarkRunEvent, { type: 'BenchmarkRunLaunched' }>>;

/** The run's tasks and configurations by uid. */
type Lookups = { tasks: Map<string, RunTask>; configurations: Map<string, RunConfiguration> };

function trialOf(d: RunLaunchedData, p: TrialPlan, of: Lookups, at: string, position: string): TrialDoc {
  const task = of.tasks.get(p.task_uid);
  return {
    uid: p.uid,
    id: p.id,
    number: p.id,
    benchmark_run_uid: d.uid,
    suite_uid: d.suite_uid,
    factory_uid: d.factory_uid,
    team_uid: d.team_uid,
    task_uid: p.task_uid,
    task_id: task?.id ?? 0,
    task_title: task?.title ?? '',
    configuration_uid: p.configuration_uid,
    configuration_id: of.configurations.get(p.configuration_uid)?.id ?? 0,
    rep_index: p.rep_index,
    state: 'pending',
    run_id: p.run_id,
    attempts: [newAttempt(1, p.run_id)],
    failure_reason: null,
    outcome: null,
    scores: d.scorers.map((s) => ({
      scorer_uid: s.uid,
      status: 'awaiting_trial',
      attempt_id: null,
      judge_run_id: null,
      classification: null,
      score: null,
      passed: null,
      error: null,
      scored_at: null,
    })),
    judges: [],
    created_at: at,
    updated_at: at,
    finished_at: null,
    position,
  };
}

function runOf(d: RunLaunchedData, by_configuration: Record<string, Tally>, at: string): BenchmarkRunDoc {
  return {
    uid: d.uid,
    factory_uid: d.factory_uid,
    team_uid: d.team_uid,
    suite_uid: d.suite_uid,
    suite_key: `${d.factory_uid}:${d.suite_uid}`,
    suite_name: d.suite_name,
    suite_version: d.suite_version,
    agent_uid: d.agent_uid,
    agent_name: d.agent_name,
    state: 'pending',
    repetition_count: d.repetition_count,
    max_attempts: d.max_attempts,
    scorer_selection: d.scorer_selection,
    scorers: d.scorers,
    configurations: d.configurations,
    tasks: d.tasks,
    trial_count: d.trials.length,
    creator: d.creator,
    cancel_reason: null,
    by_configuration,
    created_at: at,
    updated_at: at,
    started_at: null,
    completed_at: null,
  };
}

/** Puts the trials and their links; answers the tallies of each configuration and of each cell. */
function putTrials(e: Launched, docs: Docs) {
  const d = e.data;
  const byConfiguration: Record<string, Tally> = {};
  const cellTallies = new Map<string, Tally>();
  const of = {
    tasks: new Map(d.tasks.map((t) => [t.uid, t])),
    configurations: new Map(d.configurations.map((c) => [c.uid, c])),
  };
  for (const p of d.trials) {
    const trial = trialOf(d, p, of, e.metadata.occurred_at, positionKey(e.position));
    docs.in('trials').put(p.uid, trial);
    docs.in('agent_runs').put(p.run_id, { trial_uid: p.uid, benchmark_run_uid: d.uid, attempt_number: 1 });
    const tally = tallyOf(trial);
    putOwn(byConfiguration, p.configuration_uid, addTally(own(byConfiguration, p.configuration_uid) ?? null, tally));
    const key = cellKey(d.uid, p.task_uid, p.configuration_uid);
    cellTallies.set(key, addTally(cellTallies.get(key) ?? null, tally));
  }
  for (const c of d.configurations)
    if (!ownsKey(byConfiguration, c.uid)) putOwn(byConfiguration, c.uid, addTally<Tally>(null, null));
  return { byConfiguration, cellTallies };
}

export async function launched(e: Launched, docs: Docs) {
  const d = e.data;
  if (await docs.get(d.uid)) return;
  const { byConfiguration, cellTallies } = putTrials(e, docs);
  for (const p of d.trials) {
    const key = cellKey(d.uid, p.task_uid, p.configuration_uid);
    docs.in('cells').put(key, {
      benchmark_run_uid: d.uid,
      task_uid: p.task_uid,
      configuration_uid: p.configuration_uid,
      tally: cellTallies.get(key)!,
    });
  }
  docs.put(d.uid, runOf(d, byConfiguration, e.metadata.occurred_at));
}
