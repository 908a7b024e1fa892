/**
 * Self-improvement on a clock the test moves: an agent's unreviewed failures start one
 * SELF_IMPROVEMENT run once they reach the scorer's failed_run_threshold, or once the oldest is 7
 * days old; the failures it covers are reviewed; "run now" takes any agent with one failure; a
 * failure under the old threshold that passes under the new one is no failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSelfImprovement } from '../../../commands/scorer/improvement-check.js';
import { manualClock } from '../../../src/clock.js';
import { expectRefused, quiet, startTestApp, type TestApp } from '../../helpers/app.js';
import { agentRun, factoryAgent, judgeOf, newScorer, simulatedWorker } from '../../helpers/scorer-fixtures.js';
import { eventually, newFactory } from '../../helpers/task-fixtures.js';

const DAY = 24 * 60 * 60 * 1000;
const clock = manualClock('2026-06-01T09:00:00Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, clock);
});
afterAll(() => t.close());

/** A factory agent whose runs a scorer judges `classification`, one after another. */
async function scene(scorerBody: Record<string, unknown>) {
  const factory = await newFactory(t);
  const agent = await factoryAgent(t, factory);
  const scorer = await newScorer(t, factory, { self_improvement_enabled: true, ...scorerBody });
  const worker = await simulatedWorker(t, agent.key).announce();
  const judged = async (classification: string) => {
    const runId = await agentRun(t, agent.uid);
    await worker.execute(await worker.claimWhere((r) => r.run_id === runId));
    await worker.judge(await judgeOf(worker, runId), classification, `Why ${classification}`);
    return runId;
  };
  /** The self-improvement runs, once there are `count` (a reactor creates them). */
  const improvements = (count: number) =>
    eventually(async () => {
      const runs = (await t.call('GET', `/agent/runs?source=SELF_IMPROVEMENT&factory_uid=${factory}`)).json().runs;
      return runs.length === count
        ? (runs as Array<{ run_id: string; prompt: string; metadata: Record<string, string> }>)
        : undefined;
    });
  const check = () => checkSelfImprovement(t.rt, { scorer_uid: scorer.uid });
  return { factory, agent, scorer, worker, judged, improvements, check };
}

describe('self-improvement', () => {
  it('starts one run when an agent reaches failed_run_threshold unreviewed failures, and reviews them', async () => {
    const { scorer, agent, worker, judged, improvements, check } = await scene({ failed_run_threshold: 2 });
    const first = await judged('non_compliant');
    await judged('compliant');
    expect(await check()).toBe(0);
    const second = await judged('partial');
    expect(await check()).toBe(1);
    const [run] = await improvements(1);
    expect(run!.metadata).toMatchObject({ scorer_uid: scorer.uid, improved_agent_uid: agent.uid });
    expect(run!.prompt).toContain(first);
    expect(run!.prompt).toContain(second);
    expect(run!.prompt).not.toContain('Why non_compliant');
    // The worker is handed the judges' reasons with it.
    const handed = await worker.claimWhere((r) => r.source === 'SELF_IMPROVEMENT');
    expect(handed.prompt).toContain('Why non_compliant');
    expect(handed.prompt).toContain('Why partial');
    // Reviewed: no second run for the same failures; one new failure is not enough again.
    expect(await check()).toBe(0);
    await judged('non_compliant');
    expect(await check()).toBe(0);
    await improvements(1);
  });

  it('starts a run for an oldest failure 7 days old, counts only what fails under the threshold now, and runs now on request', async () => {
    const { factory, scorer, judged, improvements, check } = await scene({});
    await judged('partial'); // fails at threshold 1
    clock.advance(7 * DAY - 60_000);
    expect(await check()).toBe(0);
    // At 0.5 the partial passes: no failure left to review, however old.
    await t.call('PATCH', `/factory/${factory}/scorers/${scorer.uid}`, { threshold: 0.5 });
    clock.advance(2 * 60_000);
    expect(await check()).toBe(0);
    await t.call('PATCH', `/factory/${factory}/scorers/${scorer.uid}`, { threshold: 1 });
    expect(await check()).toBe(1);
    await improvements(1);

    // Run now: any agent with one unreviewed failure.
    await judged('non_compliant');
    const url = `/factory/${factory}/scorers/${scorer.uid}/self-improvement/run`;
    const now = await t.call('POST', url);
    expect(now.json()).toEqual({ started: 1 });
    expect((await t.call('POST', url)).json()).toEqual({ started: 0 });
    await improvements(2);
    await t.call('PATCH', `/factory/${factory}/scorers/${scorer.uid}`, { self_improvement_enabled: false });
    await quiet(t);
    await expectRefused(t, () => t.call('POST', url), 409, 'self_improvement_disabled');
  });
});
