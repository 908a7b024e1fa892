/**
 * The benchmark deciders: a suite's task titles are unique (identical is the existing task, other
 * content a conflict), edits keep what they omit and bump the version; a run retries failed
 * attempts up to its bound, judges succeeded trials, moves pending → running → scoring →
 * completed | failed, and records nothing for a trial once cancelled. Also the projection: the same
 * events twice give the same documents, and a trial costs what the cost ledger priced its runs.
 */
import { describe, expect, it } from 'vitest';
import type { BenchmarkRunEvent, RunLaunchedData, SuiteEvent, SuiteTask } from '../../../commands/benchmark/events.js';
import { compare } from '../../../commands/benchmark/comparison.js';
import { toRunResource } from '../../../commands/benchmark/run-resource.js';
import type { ScoringEvent } from '../../../commands/scorer/events.js';
import { suiteDecider } from '../../../commands/benchmark/suite-decider.js';
import { benchmarkRunDecider } from '../../../commands/benchmark/benchmark-run-decider.js';
import { Conflict } from '../../../src/kernel/errors.js';
import type { BenchmarkRunDoc, TrialDoc } from '../../../projections/benchmark/benchmark-run-docs.js';
import { benchmarkRunsProjection } from '../../../projections/benchmark/benchmark-runs.js';
import { deciderSpec, userContext } from '../../helpers/decider-spec.js';
import { executionPriced, inferencePriced } from '../../helpers/ledger-fixtures.js';
import { project, recorded } from '../../helpers/projection-spec.js';

const task = (uid: string, title: string, fields: Partial<SuiteTask> = {}): SuiteTask => ({
  uid,
  id: 1,
  title,
  prompt: 'Do it',
  success_criteria: 'It is done',
  source_run_id: null,
  starting_repo_refs: [],
  tags: [],
  labels: {},
  ...fields,
});

const created: SuiteEvent = {
  type: 'BenchmarkSuiteCreated',
  data: {
    uid: 's-1',
    factory_uid: 'f-1',
    team_uid: 't-1',
    name: 'Smoke',
    description: null,
    agent_uid: 'a-1',
    factory_agent_type: 'IMPLEMENT',
    configurations: [],
    version: 1,
    creator: { type: 'user', uid: 'u-1' },
  },
};
const added = (t: SuiteTask, version = 2): SuiteEvent => ({
  type: 'BenchmarkTaskAdded',
  data: { suite_uid: 's-1', factory_uid: 'f-1', version, task: t },
});

describe('suite decider', () => {
  const spec = deciderSpec(suiteDecider);
  it('takes an identical task as the existing one, and refuses the same title with other content', () => {
    spec
      .given([created, added(task('k-1', 'Fix login'))])
      .when({ type: 'AddTask', data: { task: task('k-2', 'Fix login') } })
      .thenNothingHappened();
    spec
      .given([created, added(task('k-1', 'Fix login'))])
      .when({ type: 'AddTask', data: { task: task('k-2', ' fix LOGIN', { prompt: 'Other' }) } })
      .thenThrows(Conflict, /titled/);
    spec
      .given([created, added(task('k-1', 'Fix login'))])
      .when({ type: 'AddTask', data: { task: task('k-2', 'Fix logout') } })
      .then([
        { type: 'BenchmarkTaskAdded', data: { version: 3, task: expect.objectContaining({ uid: 'k-2', id: 2 }) } },
      ]);
  });
  it('edits in place, keeping omitted fields, bumping the version; a title of another task is a conflict', () => {
    const given = spec.given([created, added(task('k-1', 'A', { tags: ['x'] })), added(task('k-2', 'B'), 3)]);
    given.when({ type: 'EditTask', data: { task_uid: 'k-1', changes: { tags: [], source_run_id: null } } }).then([
      {
        type: 'BenchmarkTaskEdited',
        data: { version: 4, task: expect.objectContaining({ uid: 'k-1', title: 'A', tags: [], prompt: 'Do it' }) },
      },
    ]);
    given.when({ type: 'EditTask', data: { task_uid: 'k-1', changes: { title: 'b' } } }).thenThrows(Conflict);
    given.when({ type: 'EditTask', data: { task_uid: 'k-1', changes: { prompt: 'Do it' } } }).thenNothingHappened();
  });
  it('is managed by the people of its team only', () => {
    spec
      .given([created])
      .when(
        { type: 'DeleteSuite', data: {} },
        { ...userContext('a-9', { 't-1': 'member' }), actor: { type: 'agent', uid: 'a-9' } },
      )
      .thenThrows(Error, /only people/);
  });
});

const launch = (max_attempts = 2): RunLaunchedData => ({
  uid: 'r-1',
  factory_uid: 'f-1',
  team_uid: 't-1',
  suite_uid: 's-1',
  suite_name: 'Smoke',
  suite_version: 2,
  agent_uid: 'a-1',
  agent_name: 'Implementer',
  repetition_count: 1,
  max_attempts,
  configurations: [
    {
      uid: 'c-1',
      id: 1,
      role: 'baseline',
      display_name: null,
      model: null,
      harness: null,
      harness_auth_secret_name: null,
      runner_id: null,
      agent_configs: [],
    },
  ],
  scorer_selection: [],
  scorers: [{ uid: 'sc-1', name: 'Correctness', kind: 'benchmark_task_correctness' }],
  tasks: [{ uid: 'k-1', id: 1, title: 'A', tags: [] }],
  trials: [
    { uid: 'tr-1', id: 1, task_uid: 'k-1', configuration_uid: 'c-1', rep_index: 1, run_id: 'run-1' },
    { uid: 'tr-2', id: 2, task_uid: 'k-1', configuration_uid: 'c-1', rep_index: 2, run_id: 'run-2' },
  ],
  creator: { type: 'user', uid: 'u-1' },
});
const launched: BenchmarkRunEvent = { type: 'BenchmarkRunLaunched', data: launch() };
const started: BenchmarkRunEvent = { type: 'BenchmarkRunStarted', data: { uid: 'r-1' } };
const scoring = [{ scorer_uid: 'sc-1', attempt_id: 'at-1', judge_run_id: 'j-1' }];
const end = (trial_uid: string, run_id: string, run_state: string) => ({
  type: 'EndAttempt' as const,
  data: { trial_uid, run_id, run_state, error: null, retry_run_id: `${run_id}-retry`, scoring },
});
const score = (trial_uid: string, attempt_id = 'at-1') => ({
  type: 'RecordScore' as const,
  data: {
    trial_uid,
    scorer_uid: 'sc-1',
    attempt_id,
    status: 'scored' as const,
    classification: 'pass',
    score: 1,
    passed: true,
    error: null,
  },
});

describe('benchmark run decider', () => {
  const spec = deciderSpec(benchmarkRunDecider);
  it('retries a failed attempt up to max_attempts, then fails the trial', () => {
    spec
      .given([launched, started])
      .when(end('tr-1', 'run-1', 'FAILED'))
      .then([
        { type: 'TrialAttemptEnded', data: { attempt_number: 1, run_state: 'FAILED' } },
        { type: 'TrialRetried', data: { attempt_number: 2, run_id: 'run-1-retry' } },
      ]);
    const retried: BenchmarkRunEvent = {
      type: 'TrialRetried',
      data: { uid: 'r-1', trial_uid: 'tr-1', attempt_number: 2, run_id: 'run-1b' },
    };
    spec
      .given([launched, started, retried])
      .when(end('tr-1', 'run-1', 'FAILED'))
      .thenNothingHappened(); // an old attempt
    spec
      .given([launched, started, retried])
      .when(end('tr-1', 'run-1b', 'ERROR'))
      .then([
        { type: 'TrialAttemptEnded' },
        { type: 'TrialFailed', data: { reason: expect.stringMatching(/2 of 2/) } },
      ]);
  });
  it('judges a succeeded trial, moves to scoring when nothing executes, and finishes when every score is in', () => {
    const succeeded: BenchmarkRunEvent[] = [
      { type: 'TrialSucceeded', data: { uid: 'r-1', trial_uid: 'tr-1', run_id: 'run-1', scoring } },
    ];
    spec
      .given([launched, started, ...succeeded])
      .when(end('tr-2', 'run-2', 'SUCCEEDED'))
      .then([{ type: 'TrialAttemptEnded' }, { type: 'TrialSucceeded' }, { type: 'BenchmarkRunScoring' }]);
    const both: BenchmarkRunEvent[] = [
      ...succeeded,
      { type: 'TrialFailed', data: { uid: 'r-1', trial_uid: 'tr-2', reason: 'x' } },
      { type: 'BenchmarkRunScoring', data: { uid: 'r-1' } },
    ];
    spec
      .given([launched, started, ...both])
      .when(score('tr-1', 'someone-else'))
      .thenNothingHappened();
    spec
      .given([launched, started, ...both])
      .when(score('tr-1'))
      .then([{ type: 'TrialScoreRecorded' }, { type: 'BenchmarkRunFinished', data: { state: 'completed' } }]);
  });
  it('fails a run none of whose trials succeeded', () => {
    const spec1 = deciderSpec(benchmarkRunDecider);
    spec1
      .given([{ type: 'BenchmarkRunLaunched', data: { ...launch(1), trials: [launch().trials[0]!] } }, started])
      .when(end('tr-1', 'run-1', 'FAILED'))
      .then([
        { type: 'TrialAttemptEnded' },
        { type: 'TrialFailed' },
        { type: 'BenchmarkRunFinished', data: { state: 'failed' } },
      ]);
  });
  it('records nothing after a cancel, and cannot cancel an ended run', () => {
    const cancelled: BenchmarkRunEvent = {
      type: 'BenchmarkRunCancelled',
      data: { uid: 'r-1', reason: 'x', cancelled_trials: ['tr-2'], unjudged_trials: ['tr-1'] },
    };
    const succeeded: BenchmarkRunEvent = {
      type: 'TrialSucceeded',
      data: { uid: 'r-1', trial_uid: 'tr-1', run_id: 'run-1', scoring },
    };
    spec
      .given([launched, started, succeeded])
      .when({ type: 'CancelRun', data: { reason: 'x' } })
      .then([{ type: 'BenchmarkRunCancelled', data: { cancelled_trials: ['tr-2'], unjudged_trials: ['tr-1'] } }]);
    spec.given([launched, started, succeeded, cancelled]).when(score('tr-1')).thenNothingHappened();
    spec
      .given([launched, started, succeeded, cancelled])
      .when(end('tr-2', 'run-2', 'SUCCEEDED'))
      .thenNothingHappened();
    spec
      .given([launched, started, succeeded, cancelled])
      .when({ type: 'CancelRun', data: { reason: 'y' } })
      .thenThrows(Conflict);
  });
});

describe('the significance verdict', () => {
  it('is Fisher exact, two-sided, Bonferroni across candidates', () => {
    // Worked by hand: 9/10 against 3/10 gives p = 2,490 / 125,970 (see the API test).
    expect(compare({ uid: 'b', pass: 3, fail: 7 }, { uid: 'c', pass: 9, fail: 1 }, 1)).toMatchObject({
      verdict: 'candidate_better',
      p_value: expect.closeTo(2490 / 125970, 12),
    });
    // With three candidates α is 0.05 / 3 = 0.0167: the same tables are no longer significant.
    expect(compare({ uid: 'b', pass: 3, fail: 7 }, { uid: 'c', pass: 9, fail: 1 }, 3)).toMatchObject({
      verdict: 'no_significant_difference',
    });
    expect(compare({ uid: 'b', pass: 9, fail: 1 }, { uid: 'c', pass: 3, fail: 7 }, 1).verdict).toBe('baseline_better');
    expect(compare({ uid: 'b', pass: 0, fail: 0 }, { uid: 'c', pass: 3, fail: 7 }, 1).verdict).toBe(
      'insufficient_data',
    );
  });
});

describe('benchmark runs read model', () => {
  const ended = (run_id: string, attempt_number: number, run_state: string): BenchmarkRunEvent => ({
    type: 'TrialAttemptEnded',
    data: { uid: 'r-1', trial_uid: 'tr-1', attempt_number, run_id, run_state, error: null },
  });
  const judgeStarted: ScoringEvent = {
    type: 'ScoringAttemptStarted',
    data: {
      run_id: 'run-1b',
      factory_uid: 'f-1',
      team_uid: 't-1',
      agent_uid: 'a-1',
      conversation_id: 'c-1',
      conversation_title: 'A',
      include_descendants: false,
      attempt_id: 'at-1',
      scorer_uid: 'sc-1',
      scorer_version: 1,
      judge_run_id: 'j-1',
      trigger: 'benchmark',
      attempted_at: '2026-01-01T00:00:00.000Z',
      classifications: [],
    },
  };
  // Trial tr-1: its first attempt (run-1) fails, its second (run-1b) succeeds and is judged (j-1).
  // Costs come from the cost ledger's entries, each with the run's usage so far; the workers'
  // own figures (RunUsageReported) are not read.
  const events = recorded([
    launched,
    started,
    { type: 'RunStarted', data: { run_id: 'run-1', execution_id: 'e-1' } },
    { type: 'RunUsageReported', data: { run_id: 'run-1', usage: { inference_cost_usd: 99 } } },
    inferencePriced('run-1', '2026-01-01T00:01:00.000Z', 0.1),
    executionPriced('run-1', '2026-01-01T00:02:00.000Z', { compute: 0.02, platform: 0.01 }),
    ended('run-1', 1, 'FAILED'),
    { type: 'TrialRetried', data: { uid: 'r-1', trial_uid: 'tr-1', attempt_number: 2, run_id: 'run-1b' } },
    inferencePriced('run-1b', '2026-01-01T00:03:00.000Z', 0.2),
    inferencePriced('run-1b', '2026-01-01T00:04:00.000Z', 0.3, 0.1),
    executionPriced('run-1b', '2026-01-01T00:05:00.000Z', { compute: 0.04, platform: 0.02 }),
    ended('run-1b', 2, 'SUCCEEDED'),
    { type: 'TrialSucceeded', data: { uid: 'r-1', trial_uid: 'tr-1', run_id: 'run-1b', scoring } },
    judgeStarted,
    inferencePriced('j-1', '2026-01-01T00:06:00.000Z', 0.005),
    executionPriced('j-1', '2026-01-01T00:07:00.000Z', { compute: 0.001, platform: 0 }),
    // Another run's cost is no trial's.
    inferencePriced('elsewhere', '2026-01-01T00:07:00.000Z', 5),
    {
      type: 'TrialScoreRecorded',
      data: {
        uid: 'r-1',
        trial_uid: 'tr-1',
        scorer_uid: 'sc-1',
        attempt_id: 'at-1',
        status: 'scored',
        classification: 'pass',
        score: 1,
        passed: true,
        error: null,
      },
    },
  ]);

  it('gives the same documents when the events are applied twice, or one at a time', async () => {
    const once = await project(benchmarkRunsProjection, events);
    expect(await project(benchmarkRunsProjection, events, { times: 2, batchSize: 2 })).toEqual(once);
    expect(await project(benchmarkRunsProjection, events, { batchSize: 1 })).toEqual(once);
    expect(once['trials/tr-1']).toMatchObject({ state: 'succeeded', outcome: 'pass' });
  });

  it("costs a trial's attempts and judges from the cost ledger, in dollars and credits", async () => {
    const docs = await project(benchmarkRunsProjection, events);
    const close = (inference: number, compute: number, platform: number) => ({
      inference: expect.closeTo(inference, 12),
      compute: expect.closeTo(compute, 12),
      platform: expect.closeTo(platform, 12),
      total: expect.closeTo(inference + compute + platform, 12),
    });
    // By hand, at $0.01 a credit: run-1 cost $0.10 + $0.02 + $0.01 = $0.13; run-1b's latest report
    // ($0.30, replacing $0.20) + $0.04 + $0.02 = $0.36; the trial $0.49 (49 credits). Its judge:
    // $0.005 + $0.001 = $0.006 (0.6 credits).
    const trial = docs['trials/tr-1'] as unknown as TrialDoc;
    expect(trial.attempts.map((a) => a.cost)).toEqual([close(0.1, 0.02, 0.01), close(0.3, 0.04, 0.02)]);
    expect(trial.attempts.map((a) => a.credits)).toEqual([close(10, 2, 1), close(30, 4, 2)]);
    expect(trial.judges).toEqual([{ run_id: 'j-1', cost: close(0.005, 0.001, 0), credits: close(0.5, 0.1, 0) }]);
    const run = docs['r-1'] as unknown as BenchmarkRunDoc;
    expect(run.by_configuration['c-1']).toMatchObject({
      pass: 1,
      cost: close(0.4, 0.06, 0.03),
      credits: close(40, 6, 3),
      scoring_cost: close(0.005, 0.001, 0),
      scoring_credits: close(0.5, 0.1, 0),
    });
    // The run answers trials and judges together: $0.496, 49.6 credits; tr-2 cost nothing, so a
    // trial averaged $0.245 and 24.5 credits.
    const answered = toRunResource(run, '2026-01-01T01:00:00.000Z', new Set(['results']));
    expect(answered.cost_usd).toBeCloseTo(0.496, 12);
    expect(answered.total_credits).toBe('49.6');
    expect(answered.configuration_stats![0]).toMatchObject({
      avg_cost_usd_per_trial: expect.closeTo(0.245, 12),
      avg_total_credits_per_trial: '24.5',
    });
  });
});
