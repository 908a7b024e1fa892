/**
 * Benchmarks through the API, with a worker speaking the worker protocol: suites and their tasks
 * (identical task, title conflicts, edit rules, versions), a run whose trials and judges the worker
 * executes on a clock the test moves (results, costs, retries and the significance verdict worked
 * out by hand), and a run cancelled in the middle (no trial left running, none scored after).
 * The worker reports tokens; costs are what the cost ledger priced them at, with the machine time
 * the clock gave each run, on a price list with round numbers.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { tokens } from '../../helpers/analytics-fixtures.js';
import { expectRefused, quiet, startTestApp, type TestApp } from '../../helpers/app.js';
import { type Assigned, factoryAgent, roundPriceList, simulatedWorker } from '../../helpers/scorer-fixtures.js';
import { eventually, newFactory, newMember } from '../../helpers/task-fixtures.js';

const clock = manualClock('2026-05-04T09:00:00Z');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-benchmark-prices-'));
let t: TestApp;
let factory: string;
let agent: { uid: string; key: string };
let worker: ReturnType<typeof simulatedWorker>;

beforeAll(async () => {
  // Machine time at $3.60 an hour: $0.001 a second.
  t = await startTestApp({ MODELS_FILE: roundPriceList(dir, { computeUsdPerHour: 3.6 }) }, clock);
  factory = await newFactory(t, 'Benchmarks');
  agent = await factoryAgent(t, factory);
  worker = await simulatedWorker(t, agent.key).announce();
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const base = () => `/factory/${factory}/benchmarks`;
const ok = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, status = 200) => {
  const res = await t.call(method, url, body);
  expect(res.statusCode, res.body).toBe(status);
  return res.statusCode === 204 ? null : res.json();
};

const task = (n: number) => ({
  title: `Task ${String(n).padStart(2, '0')}`,
  prompt: `Solve task-${n}`,
  success_criteria: `The agent prints OK-${n}`,
  tags: n % 2 ? ['odd'] : ['even'],
});

describe('suites and tasks', () => {
  it('creates, lists, reads, edits and soft-deletes suites; tasks are unique by title, edited by the spec rules', async () => {
    const suite = await ok('POST', base(), { name: 'Smoke', agent_uid: agent.uid, tasks: [task(1)] }, 201);
    expect(suite).toMatchObject({
      name: 'Smoke',
      agent_uid: agent.uid,
      factory_agent_type: 'IMPLEMENT',
      version: 1,
      task_count: 1,
      tasks: [{ id: 1, title: 'Task 01', success_criteria: 'The agent prints OK-1', tags: ['odd'] }],
    });
    const url = `${base()}/${suite.uid}`;

    // An identical task is the existing one; the same title (any case) with other content is a 409.
    const again = await ok('POST', `${url}/tasks`, task(1), 200);
    expect(again.uid).toBe(suite.tasks[0].uid);
    await expectRefused(
      t,
      () => t.call('POST', `${url}/tasks`, { ...task(1), title: 'task 01 ', prompt: 'x' }),
      409,
      'task_title_conflict',
    );

    // "Turn this run into a benchmark task": the prompt comes from the run.
    const source = await t.call('POST', '/agent/runs', {
      prompt: 'Fix the flaky login test',
      agent_identity_uid: agent.uid,
    });
    const fromRun = await ok(
      'POST',
      `${url}/tasks`,
      { title: 'From a run', success_criteria: 'The test passes 100 times', source_run_id: source.json().run_id },
      201,
    );
    expect(fromRun).toMatchObject({ prompt: 'Fix the flaky login test', source_run_id: source.json().run_id, id: 2 });
    // A run the caller may not read is refused, naming the field.
    const stranger = await newMember(t, (await ok('POST', '/teams', { name: 'Elsewhere' }, 201)).uid);
    void stranger;
    const problem = await expectRefused(
      t,
      () => t.call('POST', `${url}/tasks`, { ...task(9), source_run_id: '01900000-0000-7000-8000-000000000000' }),
      400,
    );
    expect(problem.errors[0].path).toBe('body.source_run_id');

    // Edits: blank and null required fields are refused; null clears provenance, [] clears tags.
    const taskUrl = `${url}/tasks/${fromRun.uid}`;
    for (const body of [{ title: '  ' }, { prompt: null }, { success_criteria: '' }])
      await expectRefused(t, () => t.call('PATCH', taskUrl, body), 400);
    const edited = await ok('PATCH', taskUrl, { source_run_id: null, tags: [], prompt: 'Fix it for good' });
    expect(edited).toMatchObject({ source_run_id: null, tags: [], prompt: 'Fix it for good', title: 'From a run' });
    await expectRefused(t, () => t.call('PATCH', taskUrl, { title: 'TASK 01' }), 409, 'task_title_conflict');
    expect((await ok('GET', taskUrl)).prompt).toBe('Fix it for good');
    expect((await ok('GET', url)).version).toBe(3); // created, a task added, a task edited (the identical add changed nothing)
    await ok('DELETE', taskUrl, undefined, 204);
    expect((await t.call('GET', taskUrl)).statusCode).toBe(404);

    // Keyset list, newest first.
    const other = await ok(
      'POST',
      `${base()}/suites`,
      { name: 'Other', agent_uid: agent.uid, uid: 'other-suite' },
      201,
    );
    expect(other.uid).toBe('other-suite');
    const first = await ok('GET', `${base()}?limit=1`);
    expect(first.data.map((s: { uid: string }) => s.uid)).toEqual(['other-suite']);
    expect(first.suites).toEqual(first.data);
    const second = await ok('GET', `${base()}?limit=1&cursor=${first.page_info.next_cursor}`);
    expect(second.data.map((s: { uid: string }) => s.uid)).toEqual([suite.uid]);
    await expectRefused(
      t,
      () => t.call('POST', `${base()}/suites`, { name: 'Again', agent_uid: agent.uid, uid: 'other-suite' }),
      409,
    );

    await ok('DELETE', `${base()}/other-suite`, undefined, 204);
    expect((await t.call('GET', `${base()}/other-suite`)).statusCode).toBe(404);
  });

  it.each([
    [{ name: '' }, 'body.name'],
    [{ name: 'x', agent_uid: 'nobody' }, 'body.agent_uid'],
    [{ name: 'x', factory_agent_type: 'FOREMAN' }, 'body.factory_agent_type'],
    [{ name: 'x', uid: 'runs' }, 'body.uid'],
    [{ name: 'x', configurations: [{ role: 'baseline', model: 'no-such-model' }] }, 'body.configurations[0].model'],
    [{ name: 'x', tasks: [{ title: 't', prompt: 'p' }] }, 'body.tasks.0.success_criteria'],
  ])('refuses the suite %j, naming %s, writing nothing', async (body, path) => {
    const problem = await expectRefused(t, () => t.call('POST', base(), { agent_uid: agent.uid, ...body }), 400);
    expect(problem.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('lets the team read but not change benchmarks with an agent key, and hides them from other teams', async () => {
    const suite = await ok('POST', base(), { name: 'Read only', agent_uid: agent.uid }, 201);
    expect((await t.call('GET', `${base()}/${suite.uid}`, undefined, agent.key)).statusCode).toBe(200);
    await expectRefused(t, () => t.call('POST', `${base()}/${suite.uid}/tasks`, task(1), agent.key), 403);
  });
});

/**
 * Runs the worker until nothing is queued: trials by `behave` (claimed and started at once, then
 * executing `seconds` on the clock), judges by `judge` (at once, reporting 1,000 input tokens of
 * the default model: $0.001).
 */
async function drain(
  behave: (run: Assigned) => { text: string; state: string; usage: Record<string, unknown>; seconds: number },
  judge: (run: Assigned) => string,
) {
  for (let idle = 0; idle < 3; ) {
    const run = await worker.claim();
    if (!run) {
      idle++;
      await quiet(t);
      continue;
    }
    idle = 0;
    if (run.source !== 'BENCHMARK_TRIAL' && run.source !== 'RUN_SCORER') {
      await worker.execute(run); // another test's run
      continue;
    }
    if (run.source === 'RUN_SCORER') {
      await worker.judge(run, judge(run), 'because', tokens('claude-4-6-sonnet', { input: 1000 }));
      continue;
    }
    const b = behave(run);
    await worker.report(run, 'claim');
    await worker.report(run, 'start');
    clock.set(new Date(clock.now().getTime() + b.seconds * 1000).toISOString());
    await worker.report(run, 'messages', { role: 'assistant', content: [{ type: 'text', text: b.text }] });
    await worker.report(run, 'usage', b.usage);
    await worker.report(run, 'finish', { state: b.state });
  }
}

describe('a benchmark run', () => {
  it('runs every trial, retries failures, judges and costs them, and says whether the candidate is better', async () => {
    const tasks = Array.from({ length: 10 }, (_, i) => task(i + 1));
    const suite = await ok('POST', base(), { name: 'Ten tasks', agent_uid: agent.uid, tasks }, 201);
    const launched = await ok(
      'POST',
      `${base()}/${suite.uid}/runs`,
      {
        repetition_count: 1,
        configurations: [
          { role: 'baseline', display_name: 'Sonnet', model: 'claude-4-6-sonnet' },
          { role: 'candidate', display_name: 'Opus', model: 'claude-4-6-opus-high' },
        ],
      },
      201,
    );
    expect(launched).toMatchObject({ state: 'pending', trial_count: 20, task_count: 10, scorer_count: 1 });
    const [baseline, candidate] = launched.configurations;
    const runUrl = `${base()}/${suite.uid}/runs/${launched.uid}`;
    const attempts = new Map<string, number>();

    // The candidate passes tasks 1-9, the baseline tasks 1-3. The candidate's first try at task 1
    // fails after 10 s with 1,000 input tokens of Opus ($0.01), and is retried. Baseline trials take
    // 60 s and 30,000 input and 4,000 output tokens of Sonnet ($0.03 + $0.02 = $0.05); candidate
    // ones 30 s and 1,000 input and 200 output tokens of Opus ($0.01 + $0.01 = $0.02).
    const intended = new Map<string, 'pass' | 'fail'>();
    await drain(
      (run) => {
        const n = Number(/task-(\d+)/.exec(run.prompt)![1]);
        const isCandidate = run.metadata.benchmark_configuration_uid === candidate.uid;
        const key = `${run.metadata.benchmark_trial_uid}`;
        attempts.set(key, (attempts.get(key) ?? 0) + 1);
        if (isCandidate && n === 1 && attempts.get(key) === 1)
          return {
            text: 'crashed',
            state: 'FAILED',
            usage: tokens('claude-4-6-opus-high', { input: 1000 }),
            seconds: 10,
          };
        const pass = isCandidate ? n <= 9 : n <= 3;
        intended.set(run.run_id, pass ? 'pass' : 'fail');
        return {
          text: pass ? `OK-${n}` : 'no idea',
          state: 'SUCCEEDED',
          usage: isCandidate
            ? tokens('claude-4-6-opus-high', { input: 1000, output: 200 })
            : tokens('claude-4-6-sonnet', { input: 30_000, output: 4000 }),
          seconds: isCandidate ? 30 : 60,
        };
      },
      (judgeRun) => {
        expect(judgeRun.prompt).toContain('## Success criteria');
        return intended.get(judgeRun.metadata.scored_run_id!)!;
      },
    );

    const run = await ok('GET', `${runUrl}?include=results&include=launch_settings`);
    expect(run.state).toBe('completed');
    expect(run.progress.trials).toEqual({
      total: 20,
      pending: 0,
      running: 0,
      succeeded: 20,
      failed: 0,
      cancelled: 0,
      completed: 20,
    });
    const results = await ok('GET', `${runUrl}/results`);
    expect(results).toMatchObject({ run_state: 'completed', provisional: false, incomplete_reason: null });
    const [b, c] = results.configurations;
    expect(b).toMatchObject({
      uid: baseline.uid,
      scoring: { pass_count: 3, fail_count: 7, pass_rate: 0.3 },
      retry_count: 0,
    });
    expect(c).toMatchObject({
      uid: candidate.uid,
      scoring: { pass_count: 9, fail_count: 1, pass_rate: 0.9 },
      retry_count: 1,
      retried_trial_count: 1,
    });
    // Costs, tokens and machine time at $0.001 a second: a baseline trial $0.05 + 60 s = $0.11, ten
    // $1.10; a candidate trial $0.02 + 30 s = $0.05, ten $0.50, and the failed first try $0.01 +
    // 10 s = $0.02: $0.52. Judges: 10 × $0.001 each side (no time passes while they judge).
    expect(b.metrics.cost_usd).toBeCloseTo(1.1, 9);
    expect(c.metrics.cost_usd).toBeCloseTo(0.52, 9);
    expect(c.metrics.avg_cost_usd_per_trial).toBeCloseTo(0.052, 9);
    expect(b.metrics.scoring_cost_usd).toBeCloseTo(0.01, 9);
    expect(c.metrics.scoring_cost_usd).toBeCloseTo(0.01, 9);
    expect(results.run_metrics.cost_usd).toBeCloseTo(1.62, 9);
    expect(results.run_metrics.total_cost_usd).toBeCloseTo(1.1 + 0.52 + 0.02, 9);
    // In credits, at $0.01: 164, of which the baseline's trials average 11 and the candidate's 5.2.
    expect(results.run_metrics.total_credits).toBe('164');
    expect(run.cost_usd).toBeCloseTo(1.64, 9);
    expect(run.total_credits).toBe('164');
    expect(
      run.configuration_stats.map((s: { avg_total_credits_per_trial: string }) => s.avg_total_credits_per_trial),
    ).toEqual(['11', '5.2']);
    // Wall time: 10 × 60 s; 10 × 30 s + 10 s for the failed attempt.
    expect(b.metrics).toMatchObject({ wall_time_s: 600, avg_wall_time_s: 60 });
    expect(c.metrics).toMatchObject({ wall_time_s: 310, avg_wall_time_s: 31 });

    // Fisher's exact test, by hand: 12 passes among 20 trials, 10 per side. With the margins fixed,
    // P(candidate passes k) = C(10,k)·C(10,12-k)/C(20,12), C(20,12) = 125,970. Observed k = 9:
    // C(10,9)·C(10,3) = 10·120 = 1,200. As unlikely or less: k = 9, 10 (1,200 + 45) and, the other
    // way, k = 3, 2 (1,200 + 45): p = 2,490 / 125,970 = 0.019767 < 0.05.
    expect(results.comparisons).toHaveLength(1);
    const [verdict] = results.comparisons;
    expect(verdict).toMatchObject({
      baseline_uid: baseline.uid,
      candidate_uid: candidate.uid,
      baseline: { pass_count: 3, trial_count: 10 },
      candidate: { pass_count: 9, trial_count: 10 },
      method: 'fisher_exact_two_sided',
      alpha: 0.05,
      significant: true,
      verdict: 'candidate_better',
    });
    expect(verdict.p_value).toBeCloseTo(2490 / 125970, 12);
    expect(verdict.difference).toBeCloseTo(0.6, 12);

    // Task and tag filters choose the trials: the odd tasks (1, 3, 5, 7, 9) pass 2 of 5 and 5 of 5.
    const odd = await ok('GET', `${runUrl}/results?tag=odd`);
    expect(odd.configurations.map((x: { scoring: { pass_count: number } }) => x.scoring.pass_count)).toEqual([2, 5]);
    // 7 passes among 10, 5 a side: C(10,7) = 120; k = 5: C(5,5)·C(5,2) = 10 and k = 2: C(5,2)·C(5,5) = 10
    // are the observed table and its mirror; every other k (3, 4) is likelier: p = 20 / 120.
    expect(odd.comparisons[0]).toMatchObject({ verdict: 'no_significant_difference', significant: false });
    expect(odd.comparisons[0].p_value).toBeCloseTo(20 / 120, 12);
    const one = await ok('GET', `${runUrl}/results?task_uid=${suite.tasks[0].uid}&configuration_uid=${candidate.uid}`);
    expect(one.configurations).toHaveLength(1);
    expect(one.configurations[0]).toMatchObject({ scoring: { pass_count: 1 }, retry_count: 1 });

    // Trials: paged by number, filtered, and found by an attempt's agent run.
    const page = await ok(
      'GET',
      `${runUrl}/trials?configuration_uid=${candidate.uid}&limit=4&include=history&include=scores`,
    );
    expect(page.data).toHaveLength(4);
    const retried = page.data.find((x: { attempt_count: number }) => x.attempt_count === 2);
    expect(retried.attempts.map((a: { state: string }) => a.state)).toEqual(['FAILED', 'SUCCEEDED']);
    expect(retried.scores[0]).toMatchObject({ kind: 'benchmark_task_correctness', status: 'scored', passed: true });
    const found = await ok('GET', `${runUrl}/trials?agent_run_id=${retried.attempts[0].run_id}`);
    expect(found.data).toEqual([expect.objectContaining({ uid: retried.uid, matched_attempt_number: 1 })]);
    await expectRefused(t, () => t.call('GET', `${runUrl}/trials?agent_run_id=${retried.run_id}&state=failed`), 400);
    const detail = await ok('GET', `${runUrl}/trials/${retried.uid}?include=details&include=results`);
    expect(detail.judge_runs).toHaveLength(1);
    // $0.02 for the failed try, $0.05 for the one that passed: each what its run's request_usage says.
    expect(detail.metrics.cost_usd).toBeCloseTo(0.07, 9);
    expect(detail.metrics.scoring_cost_usd).toBeCloseTo(0.001, 9);
    for (const attempt of detail.attempts) {
      const usage = (await ok('GET', `/agent/runs/${attempt.run_id}`)).request_usage;
      expect(attempt.cost_usd).toBeCloseTo(
        usage.inference_cost_usd + usage.compute_cost_usd + usage.platform_cost_usd,
        9,
      );
    }
    expect(detail.attempts.map((a: { cost_usd: number }) => a.cost_usd)).toEqual([
      expect.closeTo(0.02, 9),
      expect.closeTo(0.05, 9),
    ]);
    const judged = (await ok('GET', `/agent/runs/${detail.judge_runs[0].judge_run_id}`)).request_usage;
    expect(judged).toMatchObject({ inference_cost_usd: 0.001, inference_cost: 0.1, compute_cost_usd: 0 });
    const rest = await ok(
      'GET',
      `${runUrl}/trials?configuration_uid=${candidate.uid}&limit=4&cursor=${page.page_info.next_cursor}`,
    );
    expect(rest.data[0].id).toBeGreaterThan(page.data[3].id);

    // The list, by state; the trial runs are the team's runs of source BENCHMARK_TRIAL.
    const listed = await ok('GET', `${base()}/${suite.uid}/runs?state=completed&include=creator`);
    expect(listed.data.map((r: { uid: string }) => r.uid)).toEqual([launched.uid]);
    expect(listed.data[0].creator).toMatchObject({ type: 'user', email: 'admin@example.com' });
    const trialRuns = await ok(
      'GET',
      `/agent/runs?source=BENCHMARK_TRIAL&metadata[benchmark_run_uid]=${launched.uid}&limit=100`,
    );
    expect(trialRuns.runs).toHaveLength(21);
    // The correctness scorer is benchmark-managed: listed only when asked for, never dispatched by hand.
    const scorers = await ok('GET', `/factory/${factory}/scorers?include_managed=true`);
    const correctness = scorers.scorers.find(
      (s: { scorer_kind: string }) => s.scorer_kind === 'benchmark_task_correctness',
    );
    expect(correctness).toBeDefined();
    expect((await ok('GET', `/factory/${factory}/scorers`)).scorers).toEqual([]);
    await expectRefused(
      t,
      () => t.call('POST', `/factory/${factory}/scorers/${correctness.uid}/dispatch`, { run_ids: [retried.run_id] }),
      422,
      'invalid_selection',
    );
    await expectRefused(
      t,
      () => t.call('DELETE', `/factory/${factory}/scorers/${correctness.uid}`),
      409,
      'managed_scorer',
    );
    // Launching is not idempotent: every request is a run of its own.
    await expectRefused(t, () => t.call('POST', `${runUrl}/cancel`), 409, 'benchmark_run_ended');
  });

  it('cancelled in the middle: no trial is left running and none is scored after the cancel', async () => {
    const suite = await ok(
      'POST',
      base(),
      { name: 'To cancel', agent_uid: agent.uid, tasks: [task(1), task(2), task(3)] },
      201,
    );
    const launched = await ok(
      'POST',
      `${base()}/${suite.uid}/runs`,
      { repetition_count: 2, configurations: [{ role: 'baseline' }] },
      201,
    );
    const runUrl = `${base()}/${suite.uid}/runs/${launched.uid}`;
    await quiet(t);
    // One trial executed (its judge waits), one in progress, one handed out (PENDING), three queued.
    const handedOut: Assigned[] = [];
    const next = (source: string) =>
      eventually(async () => {
        const run = await worker.claim();
        if (run) handedOut.push(run);
        return run?.source === source ? run : undefined;
      });
    const done = await next('BENCHMARK_TRIAL');
    await worker.execute(done, 'OK-1');
    await quiet(t);
    const inProgress = await next('BENCHMARK_TRIAL');
    await worker.report(inProgress, 'claim');
    await worker.report(inProgress, 'start');
    const leased = await next('BENCHMARK_TRIAL');
    const judge = await next('RUN_SCORER');
    await worker.report(judge, 'claim');
    await worker.report(judge, 'start');

    const cancelled = await ok('POST', `${runUrl}/cancel`, { reason: 'wrong model' });
    expect(cancelled).toMatchObject({ state: 'cancelled', cancel_reason: 'wrong model' });
    await quiet(t);

    // The judge answers after the cancel: refused (its run was cancelled), and no score recorded.
    await worker.report(judge, 'judgement', { classification: 'pass' }, [409]);
    await worker.report(inProgress, 'finish', { state: 'SUCCEEDED' }, [409]);
    // A run handed out at the cancel (PENDING) is cancelled as soon as it is claimed.
    expect((await ok('GET', `/agent/runs/${leased.run_id}`)).state).toBe('PENDING');
    for (const run of handedOut.filter((r) => ![done, inProgress, judge].includes(r)))
      await worker.report(run, 'claim', undefined, [200, 409]);
    await quiet(t);
    expect((await ok('GET', `/agent/runs/${leased.run_id}`)).state).toBe('CANCELLED');
    const trials = await ok('GET', `${runUrl}/trials?include=scores&include=history&limit=100`);
    for (const trial of trials.data) {
      const state = (await ok('GET', `/agent/runs/${trial.run_id}`)).state;
      expect(['CANCELLED', 'SUCCEEDED'], `${trial.uid}: ${state}`).toContain(state);
    }
    const judgeState = (await ok('GET', `/agent/runs/${judge.run_id}`)).state;
    expect(judgeState).toBe('CANCELLED');
    expect(trials.data.filter((x: { state: string }) => x.state === 'cancelled')).toHaveLength(5);
    const executed = trials.data.find((x: { state: string }) => x.state === 'succeeded');
    expect(executed.scores[0]).toMatchObject({ status: 'finished_unscored', error: 'the benchmark run was cancelled' });
    const results = await ok('GET', `${runUrl}/results`);
    expect(results).toMatchObject({
      run_state: 'cancelled',
      provisional: false,
      trial_progress: { total: 6, succeeded: 1, cancelled: 5, pending: 0, running: 0 },
      score_progress: { scored: 0, judging: 0 },
    });
    expect(results.incomplete_reason).toMatch(/wrong model/);
    await eventually(async () => ((await ok('GET', runUrl)).state === 'cancelled' ? true : undefined));
  });
});
