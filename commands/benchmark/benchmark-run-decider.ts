/**
 * The rules of a benchmark run (`benchmarkrun-<uid>`): its states (pending → running → scoring →
 * completed | failed, or cancelled while in flight), each trial's attempts (a failed execution is
 * tried again up to `max_attempts`), which judgements count (the attempt the run started for that
 * trial and scorer, once), and that nothing is recorded for a trial after the run was cancelled.
 */
import type { Decider } from '../../src/kernel/decider.js';
import { Conflict, NotFound } from '../../src/kernel/errors.js';
import type { BenchmarkRunEvent, BenchmarkRunState, RunLaunchedData, TrialScoring } from './events.js';
import { own, putOwn } from '../../src/own-keys.js';

export type BenchmarkRunCommand =
  | { type: 'LaunchRun'; data: Omit<RunLaunchedData, 'creator'> }
  | { type: 'MarkStarted'; data: Record<string, never> }
  /**
   * The agent run of a trial's current attempt ended. The ids a retry or the judging needs come
   * with the command (derived from the event that ended the run), so a repeated report adds nothing.
   */
  | {
      type: 'EndAttempt';
      data: {
        trial_uid: string;
        run_id: string;
        run_state: string;
        error: string | null;
        retry_run_id: string;
        scoring: TrialScoring[];
      };
    }
  | {
      type: 'RecordScore';
      data: {
        trial_uid: string;
        scorer_uid: string;
        attempt_id: string;
        status: 'scored' | 'failed';
        classification: string | null;
        score: number | null;
        passed: boolean | null;
        error: string | null;
      };
    }
  | { type: 'CancelRun'; data: { reason: string } };

type TrialStatus = 'executing' | 'succeeded' | 'failed' | 'cancelled';

interface TrialState {
  uid: string;
  run_id: string;
  attempt: number;
  status: TrialStatus;
  /** The judging started when the trial succeeded, and which of it is done. */
  scoring: Array<TrialScoring & { done: boolean }>;
}

export type LiveRun = {
  status: 'live';
  uid: string;
  factory_uid: string;
  team_uid: string;
  state: BenchmarkRunState;
  max_attempts: number;
  trials: Record<string, TrialState>;
  /** The trial of each agent run an attempt used. */
  by_run: Record<string, string>;
  /** What the launch froze: configurations, scorers, tasks, trials. */
  launch: RunLaunchedData;
};

export type BenchmarkRunDeciderState = { status: 'none' } | LiveRun;

/** States a run is in flight in: it may be cancelled, and its trials move. */
export const IN_FLIGHT: readonly BenchmarkRunState[] = ['pending', 'running', 'scoring'];

const judging = (t: TrialState) => t.status === 'succeeded' && t.scoring.some((s) => !s.done);

/** The run's next state once `events` are applied, as the events that say so (none if it stays). */
function progress(run: LiveRun): BenchmarkRunEvent[] {
  if (!IN_FLIGHT.includes(run.state)) return [];
  const trials = Object.values(run.trials);
  if (trials.some((t) => t.status === 'executing')) return [];
  if (trials.some(judging))
    return run.state === 'scoring' ? [] : [{ type: 'BenchmarkRunScoring', data: { uid: run.uid } }];
  const state = trials.some((t) => t.status === 'succeeded') ? 'completed' : 'failed';
  return [{ type: 'BenchmarkRunFinished', data: { uid: run.uid, state } }];
}

const withTrial = (run: LiveRun, uid: string, change: (t: TrialState) => TrialState): LiveRun => {
  const trial = own(run.trials, uid);
  return trial ? { ...run, trials: { ...run.trials, [uid]: change(trial) } } : run;
};

function evolve(state: BenchmarkRunDeciderState, event: BenchmarkRunEvent): BenchmarkRunDeciderState {
  if (event.type === 'BenchmarkRunLaunched') {
    const d = event.data;
    const trials: Record<string, TrialState> = {};
    const by_run: Record<string, string> = {};
    for (const t of d.trials) {
      putOwn(trials, t.uid, { uid: t.uid, run_id: t.run_id, attempt: 1, status: 'executing', scoring: [] });
      putOwn(by_run, t.run_id, t.uid);
    }
    return {
      status: 'live',
      uid: d.uid,
      factory_uid: d.factory_uid,
      team_uid: d.team_uid,
      state: 'pending',
      max_attempts: d.max_attempts,
      trials,
      by_run,
      launch: d,
    };
  }
  if (state.status !== 'live') return state;
  switch (event.type) {
    case 'BenchmarkRunStarted':
      return state.state === 'pending' ? { ...state, state: 'running' } : state;
    case 'BenchmarkRunScoring':
      return { ...state, state: 'scoring' };
    case 'BenchmarkRunFinished':
      return { ...state, state: event.data.state };
    case 'BenchmarkRunCancelled':
      return {
        ...state,
        state: 'cancelled',
        trials: Object.fromEntries(
          Object.entries(state.trials).map(([uid, t]) => [
            uid,
            t.status === 'executing' ? { ...t, status: 'cancelled' as const } : t,
          ]),
        ),
      };
    case 'TrialAttemptEnded':
      return state;
    case 'TrialRetried': {
      const { trial_uid, attempt_number, run_id } = event.data;
      const next = withTrial(state, trial_uid, (t) => ({ ...t, run_id, attempt: attempt_number }));
      return { ...next, by_run: { ...next.by_run, [run_id]: trial_uid } };
    }
    case 'TrialSucceeded':
      return withTrial(state, event.data.trial_uid, (t) => ({
        ...t,
        status: 'succeeded',
        scoring: event.data.scoring.map((s) => ({ ...s, done: false })),
      }));
    case 'TrialFailed':
      return withTrial(state, event.data.trial_uid, (t) => ({ ...t, status: 'failed' }));
    case 'TrialCancelled':
      return withTrial(state, event.data.trial_uid, (t) => ({ ...t, status: 'cancelled' }));
    case 'TrialScoreRecorded': {
      const { trial_uid, scorer_uid } = event.data;
      return withTrial(state, trial_uid, (t) => ({
        ...t,
        scoring: t.scoring.map((s) => (s.scorer_uid === scorer_uid ? { ...s, done: true } : s)),
      }));
    }
  }
}

/** The events of a decision, and then the run's move they bring about. */
function decided(run: LiveRun, events: BenchmarkRunEvent[]): BenchmarkRunEvent[] {
  if (!events.length) return events;
  const after = events.reduce(evolve, run) as LiveRun;
  return [...events, ...progress(after)];
}

export const benchmarkRunDecider: Decider<BenchmarkRunCommand, BenchmarkRunEvent, BenchmarkRunDeciderState> = {
  initialState: () => ({ status: 'none' }),
  evolve,
  decide: (command, state, context) => {
    if (command.type === 'LaunchRun') {
      if (state.status !== 'none') throw new Conflict(`benchmark run ${command.data.uid} exists`);
      return [{ type: 'BenchmarkRunLaunched', data: { ...command.data, creator: context.actor } }];
    }
    if (state.status !== 'live') throw new NotFound('benchmark run');
    const run = state;
    const uid = run.uid;
    switch (command.type) {
      case 'MarkStarted':
        return run.state === 'pending' ? [{ type: 'BenchmarkRunStarted', data: { uid } }] : [];
      case 'CancelRun':
        if (!IN_FLIGHT.includes(run.state))
          throw new Conflict(`the benchmark run has already ended (${run.state})`, 'benchmark_run_ended');
        return [
          {
            type: 'BenchmarkRunCancelled',
            data: {
              uid,
              reason: command.data.reason,
              cancelled_trials: Object.values(run.trials)
                .filter((t) => t.status === 'executing')
                .map((t) => t.uid),
              unjudged_trials: Object.values(run.trials)
                .filter(judging)
                .map((t) => t.uid),
            },
          },
        ];
      case 'EndAttempt': {
        const { trial_uid, run_id, run_state, error, retry_run_id, scoring } = command.data;
        const trial = own(run.trials, trial_uid);
        // Only the current attempt of a trial still executing, of a run in flight, moves it.
        if (!IN_FLIGHT.includes(run.state) || trial?.status !== 'executing' || trial.run_id !== run_id) return [];
        const ended: BenchmarkRunEvent = {
          type: 'TrialAttemptEnded',
          data: { uid, trial_uid, attempt_number: trial.attempt, run_id, run_state, error },
        };
        if (run_state === 'SUCCEEDED')
          return decided(run, [ended, { type: 'TrialSucceeded', data: { uid, trial_uid, run_id, scoring } }]);
        if (run_state === 'CANCELLED')
          return decided(run, [ended, { type: 'TrialCancelled', data: { uid, trial_uid } }]);
        if (run_state !== 'NOT_STARTED' && trial.attempt < run.max_attempts)
          return decided(run, [
            ended,
            {
              type: 'TrialRetried',
              data: { uid, trial_uid, attempt_number: trial.attempt + 1, run_id: retry_run_id },
            },
          ]);
        const reason =
          run_state === 'NOT_STARTED'
            ? `the trial's run could not be started: ${error ?? 'refused'}`
            : `every attempt failed (${trial.attempt} of ${run.max_attempts}; the last ended ${run_state})`;
        return decided(run, [ended, { type: 'TrialFailed', data: { uid, trial_uid, reason } }]);
      }
      case 'RecordScore': {
        const d = command.data;
        const trial = own(run.trials, d.trial_uid);
        const expected = trial?.scoring.find((s) => s.scorer_uid === d.scorer_uid);
        // A judgement counts once, for the attempt the run started, while the run is in flight.
        if (!IN_FLIGHT.includes(run.state) || !expected || expected.done || expected.attempt_id !== d.attempt_id)
          return [];
        return decided(run, [{ type: 'TrialScoreRecorded', data: { uid, ...d } }]);
      }
    }
  },
};
