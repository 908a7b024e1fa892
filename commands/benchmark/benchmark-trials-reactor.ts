/**
 * What a benchmark run does on its own, as one reactor, so that its steps happen in log order
 * (a launch's runs are created before its cancellation is acted on). Ids come from the events, so
 * a replay does nothing twice:
 * - a launch creates each trial's first agent run (source BENCHMARK_TRIAL, as the suite's agent);
 * - an attempt's run that ends is reported to the benchmark run, which retries, fails or judges
 *   the trial; a retry creates the next run;
 * - a succeeded trial starts an attempt of each of the run's scorers on the trial's run (their
 *   judges are the scorers' own judge runs), with the task's success criteria;
 * - a judgement (or a failed attempt) of a trial's run is recorded on the benchmark run;
 * - a cancellation cancels the trials' runs and judges still working; one being handed to a
 *   worker at that moment (PENDING) is cancelled as soon as it is claimed or its lease runs out.
 */
import { Conflict, DomainError } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { derivedId, reactionContext, reactor } from '../../src/projector/reactor.js';
import type { Runtime } from '../../src/runtime.js';
import { createRun, runDecider, runState } from '../run/public.js';
import { type RunEvent, runStream, TERMINAL_STATES } from '../run/events.js';
import { scorerDecider, inScope, scoringDecider } from '../scorer/public.js';
import { type ScoringEvent, scorerStream, scoringStream } from '../scorer/events.js';
import { type LiveSuite, suiteDecider, type SuiteState } from './suite-decider.js';
import type { HARNESSES } from './request-schemas.js';
import {
  type BenchmarkRunEvent,
  benchmarkRunStream,
  type RunLaunchedData,
  type SuiteEvent,
  suiteStream,
  TRIAL_METADATA,
  type TrialPlan,
} from './events.js';
import { type BenchmarkRunCommand, benchmarkRunDecider, IN_FLIGHT, type LiveRun } from './benchmark-run-decider.js';
import { own } from '../../src/own-keys.js';

const benchmarksActor = { type: 'system' as const, uid: 'benchmarks' };

/** The suite as it was at `version`: its events folded up to that version. */
async function suiteAt(rt: Runtime, factoryUid: string, suiteUid: string, version: number) {
  const events = await rt.events.readStream(suiteStream(factoryUid, suiteUid));
  let state: SuiteState = suiteDecider.initialState();
  for (const e of events) {
    const event = { type: e.type, data: e.data } as SuiteEvent;
    if (event.data.version > version) break;
    state = suiteDecider.evolve(state, event);
  }
  return state.status === 'live' ? state : null;
}

async function liveRun(rt: Runtime, uid: string): Promise<LiveRun | null> {
  const state = await rt.state(benchmarkRunDecider, benchmarkRunStream(uid));
  return state.status === 'live' ? state : null;
}

const send = (rt: Runtime, uid: string, command: BenchmarkRunCommand, context: CommandContext) =>
  rt.execute(benchmarkRunStream(uid), benchmarkRunDecider, command, { ...context, actor: benchmarksActor });

/** The benchmark trial an agent run is an attempt of, from its metadata (null for other runs). */
async function trialRunOf(rt: Runtime, runId: string) {
  const run = await runState(rt, runId);
  const m = run?.created.metadata;
  if (run?.created.source !== 'BENCHMARK_TRIAL' || !m?.[TRIAL_METADATA.run] || !m[TRIAL_METADATA.trial]) return null;
  return { run, benchmark_run_uid: m[TRIAL_METADATA.run]!, trial_uid: m[TRIAL_METADATA.trial]! };
}

/** Creates the agent run of a trial's attempt; a run that cannot be created ends the attempt at once. */
async function startAttempt(
  rt: Runtime,
  event: RecordedEvent,
  launch: RunLaunchedData,
  suite: LiveSuite | null,
  plan: TrialPlan,
  attempt: number,
  runId: string,
) {
  if (await runState(rt, runId)) return;
  const context: CommandContext = { ...reactionContext(event, rt.clock.now()), actor: launch.creator };
  const task = suite?.tasks.find((t) => t.uid === plan.task_uid);
  const configuration = launch.configurations.find((c) => c.uid === plan.configuration_uid)!;
  const label = configuration.display_name || `${configuration.role} ${configuration.id}`;
  try {
    if (!task) throw new DomainError(409, 'task_gone', 'Conflict', 'the task is not in the suite version launched');
    await createRun(
      rt,
      {
        prompt: task.prompt,
        title: `Benchmark ${launch.suite_name}: ${task.title} (${label}, #${plan.rep_index})`.slice(0, 500),
        config: {
          name: label.slice(0, 200),
          ...(configuration.model ? { model_id: configuration.model } : {}),
          ...(configuration.harness ? { harness: { type: configuration.harness as (typeof HARNESSES)[number] } } : {}),
          ...(configuration.runner_id ? { runner_id: configuration.runner_id } : {}),
        },
        agent_identity_uid: launch.agent_uid,
        team: true,
        interactive: false,
        mode: 'normal',
        metadata: {
          [TRIAL_METADATA.run]: launch.uid,
          [TRIAL_METADATA.trial]: plan.uid,
          [TRIAL_METADATA.suite]: launch.suite_uid.slice(0, 256),
          [TRIAL_METADATA.configuration]: configuration.uid,
          [TRIAL_METADATA.task]: plan.task_uid,
          [TRIAL_METADATA.attempt]: String(attempt),
        },
      },
      context,
      { source: 'BENCHMARK_TRIAL', team_uid: launch.team_uid, run_id: runId, factory_uid: launch.factory_uid },
    );
  } catch (error) {
    if (await runState(rt, runId)) return; // another process created it
    if (!(error instanceof DomainError)) throw error;
    await send(
      rt,
      launch.uid,
      {
        type: 'EndAttempt',
        data: {
          trial_uid: plan.uid,
          run_id: runId,
          run_state: 'NOT_STARTED',
          error: error.message,
          retry_run_id: derivedId(event, `retry:${plan.uid}`),
          scoring: [],
        },
      },
      reactionContext(event, rt.clock.now()),
    );
  }
}

/** Cancels a run still working (a PENDING one waits for its claim or its lease's end: see below). */
async function cancelRun(rt: Runtime, runId: string, event: RecordedEvent, reason: string) {
  const run = await runState(rt, runId);
  if (!run || TERMINAL_STATES.includes(run.state) || run.state === 'PENDING') return;
  try {
    await rt.execute(
      runStream(runId),
      runDecider,
      { type: 'CancelRun', data: { run_id: runId, reason } },
      { ...reactionContext(event, rt.clock.now()), actor: benchmarksActor },
    );
  } catch (error) {
    // Ended or handed out meanwhile: its own next event brings it back here.
    if (!(error instanceof DomainError)) throw error;
  }
}

/** The runs of a cancelled benchmark run still to cancel: its trials' current runs and their judges. */
function runsToCancel(run: LiveRun): string[] {
  return Object.values(run.trials).flatMap((t) => [t.run_id, ...t.scoring.map((s) => s.judge_run_id)]);
}

/** A trial's or judge's run moved while its benchmark run is cancelled: it is cancelled too. */
async function cancelIfRunCancelled(rt: Runtime, event: RecordedEvent<RunEvent>) {
  const runId = event.data.run_id;
  const run = await runState(rt, runId);
  if (!run || TERMINAL_STATES.includes(run.state)) return;
  const m = run.created.metadata;
  const trialRunId = run.created.source === 'RUN_SCORER' ? m.scored_run_id : runId;
  const trial = trialRunId ? await trialRunOf(rt, trialRunId) : null;
  if (!trial) return;
  const bench = await liveRun(rt, trial.benchmark_run_uid);
  if (bench?.state === 'cancelled' && runsToCancel(bench).includes(runId))
    await cancelRun(rt, runId, event, 'the benchmark run was cancelled');
}

/** A trial's run ended: the benchmark run decides what follows (a retry, a failure, judging). */
async function endTrialRun(rt: Runtime, event: RecordedEvent<RunEvent>, runState: string, error: string | null) {
  const trial = await trialRunOf(rt, event.data.run_id);
  if (!trial) return;
  const bench = await liveRun(rt, trial.benchmark_run_uid);
  if (!bench) return;
  await send(
    rt,
    bench.uid,
    {
      type: 'EndAttempt',
      data: {
        trial_uid: trial.trial_uid,
        run_id: event.data.run_id,
        run_state: runState,
        error,
        retry_run_id: derivedId(event, `retry:${trial.trial_uid}`),
        scoring: bench.launch.scorers.map((s) => ({
          scorer_uid: s.uid,
          attempt_id: derivedId(event, `attempt:${s.uid}`),
          judge_run_id: derivedId(event, `judge:${s.uid}`),
        })),
      },
    },
    reactionContext(event, rt.clock.now()),
  );
}

/** A judgement of a trial's run (or its failure) is the trial's score by that scorer. */
async function recordScore(
  rt: Runtime,
  event: RecordedEvent<ScoringEvent>,
  score: { classification: string | null; score: number | null; error: string | null },
) {
  const { run_id, scorer_uid, attempt_id } = event.data;
  const trial = await trialRunOf(rt, run_id);
  if (!trial) return;
  const scorer = await rt.state(scorerDecider, scorerStream(scorer_uid));
  const threshold = scorer.status === 'live' ? scorer.threshold : null;
  const scored = score.score !== null;
  await send(
    rt,
    trial.benchmark_run_uid,
    {
      type: 'RecordScore',
      data: {
        trial_uid: trial.trial_uid,
        scorer_uid,
        attempt_id,
        status: scored ? 'scored' : 'failed',
        classification: score.classification,
        score: score.score,
        passed: scored && threshold !== null ? score.score! >= threshold : null,
        error: score.error,
      },
    },
    reactionContext(event, rt.clock.now()),
  );
}

export const benchmarkTrialsReactor = reactor<BenchmarkRunEvent | RunEvent | ScoringEvent, Runtime>({
  name: 'benchmark_trials',
  replay: 'after-last-effect',
  on: {
    BenchmarkRunLaunched: async (event, rt) => {
      const launch = event.data;
      const run = await liveRun(rt, launch.uid);
      if (!run || !IN_FLIGHT.includes(run.state)) return; // cancelled before its trials started
      const suite = await suiteAt(rt, launch.factory_uid, launch.suite_uid, launch.suite_version);
      for (const plan of launch.trials) {
        const trial = own(run.trials, plan.uid);
        if (trial?.status === 'executing' && trial.attempt === 1)
          await startAttempt(rt, event, launch, suite, plan, 1, plan.run_id);
      }
      await send(rt, launch.uid, { type: 'MarkStarted', data: {} }, reactionContext(event, rt.clock.now()));
    },
    TrialRetried: async (event, rt) => {
      const run = await liveRun(rt, event.data.uid);
      const trial = run && own(run.trials, event.data.trial_uid);
      if (!run || !IN_FLIGHT.includes(run.state) || trial?.status !== 'executing' || trial.run_id !== event.data.run_id)
        return;
      const plan = run.launch.trials.find((t) => t.uid === event.data.trial_uid)!;
      const suite = await suiteAt(rt, run.factory_uid, run.launch.suite_uid, run.launch.suite_version);
      await startAttempt(rt, event, run.launch, suite, plan, event.data.attempt_number, event.data.run_id);
    },
    TrialSucceeded: async (event, rt) => {
      const run = await liveRun(rt, event.data.uid);
      if (!run || !IN_FLIGHT.includes(run.state)) return;
      const trialRun = await runState(rt, event.data.run_id);
      if (!trialRun) return;
      const c = trialRun.created;
      const launch = run.launch;
      const plan = launch.trials.find((t) => t.uid === event.data.trial_uid)!;
      const suite = await suiteAt(rt, launch.factory_uid, launch.suite_uid, launch.suite_version);
      const criteria = suite?.tasks.find((t) => t.uid === plan.task_uid)?.success_criteria;
      const context: CommandContext = { ...reactionContext(event, rt.clock.now()), actor: launch.creator };
      for (const s of event.data.scoring) {
        const scorer = await rt.state(scorerDecider, scorerStream(s.scorer_uid));
        const stream = scoringStream(s.scorer_uid, c.run_id);
        if (scorer.status !== 'live') {
          // Deleted since the launch: the trial is unscored by it (the attempt records why).
          await recordScoreDirect(rt, event, run.uid, event.data.trial_uid, s, 'the scorer was deleted');
          continue;
        }
        const agent = inScope(scorer, launch.agent_uid);
        await rt.execute(
          stream,
          scoringDecider,
          {
            type: 'StartAttempt',
            data: {
              run_id: c.run_id,
              factory_uid: launch.factory_uid,
              team_uid: launch.team_uid,
              agent_uid: launch.agent_uid,
              conversation_id: c.conversation_id,
              conversation_title: c.title,
              include_descendants: agent?.include_descendants ?? false,
              attempt_id: s.attempt_id,
              scorer_uid: s.scorer_uid,
              scorer_version: scorer.version,
              judge_run_id: s.judge_run_id,
              trigger: 'benchmark',
              classifications: scorer.allowed_classifications,
              ...(scorer.scorer_kind === 'benchmark_task_correctness' && criteria ? { criteria } : {}),
            },
          },
          context,
        );
      }
    },
    ScoringJudgementRecorded: (event, rt) =>
      recordScore(rt, event, { classification: event.data.classification, score: event.data.score, error: null }),
    ScoringAttemptFailed: (event, rt) =>
      recordScore(rt, event, { classification: null, score: null, error: event.data.error }),
    BenchmarkRunCancelled: async (event, rt) => {
      const run = await liveRun(rt, event.data.uid);
      if (!run) return;
      for (const runId of runsToCancel(run)) await cancelRun(rt, runId, event, 'the benchmark run was cancelled');
    },
    RunFinished: (event, rt) => endTrialRun(rt, event, event.data.state, event.data.status_message?.message ?? null),
    RunCancelled: (event, rt) => endTrialRun(rt, event, 'CANCELLED', event.data.reason),
    RunWorkerLost: (event, rt) =>
      event.data.requeued
        ? cancelIfRunCancelled(rt, event)
        : endTrialRun(rt, event, 'ERROR', 'the worker executing the run stopped heartbeating'),
    RunClaimed: (event, rt) => cancelIfRunCancelled(rt, event),
    RunLeaseExpired: (event, rt) => cancelIfRunCancelled(rt, event),
  },
});

/** A score that will not come (its scorer is gone), recorded as a failed one. */
async function recordScoreDirect(
  rt: Runtime,
  event: RecordedEvent,
  benchmarkRunUid: string,
  trialUid: string,
  s: { scorer_uid: string; attempt_id: string },
  error: string,
) {
  try {
    await send(
      rt,
      benchmarkRunUid,
      {
        type: 'RecordScore',
        data: {
          trial_uid: trialUid,
          scorer_uid: s.scorer_uid,
          attempt_id: s.attempt_id,
          status: 'failed',
          classification: null,
          score: null,
          passed: null,
          error,
        },
      },
      reactionContext(event, rt.clock.now()),
    );
  } catch (e) {
    if (!(e instanceof Conflict)) throw e;
  }
}
