/**
 * Manual dispatch: every rule of the spec checked for the whole request before any job starts;
 * per-item outcomes; sampling skipped; a new manual score replaces the scorer's prior result for
 * the run; and an automatic and a manual judge racing on one run leave one live score.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectRefused, quiet, startTestApp, type TestApp } from '../../helpers/app.js';
import { agentRun, factoryAgent, judgeOf, newScorer, simulatedWorker } from '../../helpers/scorer-fixtures.js';
import { eventually, newFactory } from '../../helpers/task-fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** A factory, its agent and worker, and one run of the agent executed to its end. */
async function scene(scorerBody: Record<string, unknown> = { sampling_rate: 0 }) {
  const factory = await newFactory(t);
  const agent = await factoryAgent(t, factory);
  const scorer = await newScorer(t, factory, scorerBody);
  const worker = await simulatedWorker(t, agent.key).announce();
  const runId = await agentRun(t, agent.uid);
  await worker.execute(await worker.claimWhere((r) => r.run_id === runId));
  return { factory, agent, scorer, worker, runId };
}

const results = (factory: string, scorer: string, query = '') =>
  t.call('GET', `/factory/${factory}/scorers/${scorer}/results${query}`).then((r) => r.json().results);

describe('manual dispatch', () => {
  it('judges a run the scorer never samples, and a second manual score replaces the first', async () => {
    const { factory, scorer, worker, runId } = await scene();
    const url = `/factory/${factory}/runs/${runId}/scorer_dispatch`;
    const first = await t.call('POST', url, { scorer_uids: [scorer.uid, scorer.uid] });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().outcomes).toEqual([
      {
        scorer_uid: scorer.uid,
        run_id: runId,
        status: 'dispatched',
        attempt_id: expect.any(String),
        scoring_run_id: expect.any(String),
        error: null,
      },
    ]);
    const judge = await judgeOf(worker, runId);
    expect(judge.run_id).toBe(first.json().outcomes[0].scoring_run_id);
    await worker.judge(judge, 'non_compliant', 'The tests were never run.');
    await eventually(async () => ((await results(factory, scorer.uid))[0]?.status === 'scored' ? true : undefined));

    const again = await t.call('POST', `/factory/${factory}/scorers/${scorer.uid}/dispatch`, { run_ids: [runId] });
    expect(again.json().outcomes[0]).toMatchObject({ status: 'dispatched' });
    // The prior score stays shown while the new judge runs.
    expect((await results(factory, scorer.uid))[0]).toMatchObject({
      status: 'scored',
      is_in_flight: true,
      classification: 'non_compliant',
    });
    await worker.judge(await judgeOf(worker, runId), 'compliant', 'Tests ran and passed.');
    const [result] = await results(factory, scorer.uid, '?include_reasons=true');
    expect(result).toMatchObject({
      status: 'scored',
      is_in_flight: false,
      trigger: 'manual',
      classification: 'compliant',
      outcome: 'pass',
      reason: 'Tests ran and passed.',
    });
    const list = (await t.call('GET', `/factory/${factory}/scorers`)).json().scorers[0];
    expect(list).toMatchObject({ result_count: 1, pass_rate_summary: { recent_outcomes: ['pass'] } });
    expect((await t.call('GET', `/factory/${factory}/scorers/${scorer.uid}/metrics`)).json()).toMatchObject({
      score_count: 1,
      pass_count: 1,
    });
  });

  it('leaves one live score when an automatic and a manual judge race on the same run', async () => {
    const { factory, scorer, worker, runId } = await scene({});
    // The automatic attempt is under way...
    const automatic = await judgeOf(worker, runId);
    // ...when someone dispatches the run by hand; and again, twice at once.
    const [a, b] = await Promise.all([
      t.call('POST', `/factory/${factory}/runs/${runId}/scorer_dispatch`, { scorer_uids: [scorer.uid] }),
      t.call('POST', `/factory/${factory}/scorers/${scorer.uid}/dispatch`, { run_ids: [runId] }),
    ]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    const manual = [await judgeOf(worker, runId), await judgeOf(worker, runId)];
    expect(new Set([automatic.run_id, ...manual.map((m) => m.run_id)]).size).toBe(3);

    // The judges answer at once, the oldest last: the newest attempt's score is the live one.
    const newest = (await results(factory, scorer.uid))[0].scoring_run_id as string;
    expect(manual.map((m) => m.run_id)).toContain(newest);
    await Promise.all(manual.map((m) => worker.judge(m, m.run_id === newest ? 'compliant' : 'partial', 'manual')));
    await worker.judge(automatic, 'non_compliant', 'automatic');

    const rows = await results(factory, scorer.uid);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'scored', classification: 'compliant', scoring_run_id: newest });
    const scores = (await t.call('GET', `/factory/runs/${runId}/scores`)).json().scores;
    expect(scores).toHaveLength(1);
    expect((await t.call('GET', `/factory/${factory}/scorers`)).json().scorers[0].result_count).toBe(1);
    // Three judge runs were paid for (their ends are recorded as they are seen).
    const metrics = await eventually(async () => {
      const m = (await t.call('GET', `/factory/${factory}/scorers/${scorer.uid}/metrics?include_cost=true`)).json();
      return m.cost.judge_run_count === 3 ? m : undefined;
    });
    expect(metrics).toMatchObject({ score_count: 1, pass_count: 1 });
  });

  it('pages results newest attempt first, and answers a run_id filter whole', async () => {
    const { factory, agent, scorer, worker, runId } = await scene();
    const runs = [runId];
    for (let i = 0; i < 2; i++) {
      const id = await agentRun(t, agent.uid);
      await worker.execute(await worker.claimWhere((r) => r.run_id === id));
      runs.push(id);
    }
    for (const run of runs)
      await t.call('POST', `/factory/${factory}/scorers/${scorer.uid}/dispatch`, { run_ids: [run] });
    const url = `/factory/${factory}/scorers/${scorer.uid}/results`;
    type Row = { run_id: string; attempted_at: string; attempt_id: string };
    const first = (await t.call('GET', `${url}?limit=2`)).json();
    expect(first.results).toHaveLength(2);
    expect(first.results[0]).toMatchObject({ status: 'in_flight', is_in_flight: true, trigger: 'manual' });
    expect(first.page_info.has_next_page).toBe(true);
    const next = (await t.call('GET', `${url}?limit=2&cursor=${first.page_info.next_cursor}`)).json();
    expect(next.results).toHaveLength(1);
    expect(next.page_info).toEqual({ has_next_page: false, next_cursor: null });
    const all: Row[] = [...first.results, ...next.results];
    expect(all.map((r) => r.run_id).sort()).toEqual([...runs].sort());
    const key = (r: Row) => `${r.attempted_at} ${r.attempt_id}`;
    expect(all.map(key)).toEqual(all.map(key).sort().reverse());
    const some = (await t.call('GET', `${url}?run_id=${runs[0]}&run_id=%20${runs[2]}%20&run_id=nope`)).json();
    expect(some.results.map((r: Row) => r.run_id).sort()).toEqual([runs[0], runs[2]].sort());
  });

  it('checks the whole selection before any job starts, naming every refused item', async () => {
    const { factory, agent, scorer, worker, runId } = await scene();
    const other = await factoryAgent(t, factory, 'Reviewer');
    const narrow = await newScorer(t, factory, { scope_mode: 'selected_agents', agent_uids: [other.uid] });
    const unknown = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
    const url = `/factory/${factory}/runs/${runId}/scorer_dispatch`;

    await quiet(t); // the judge runs of earlier dispatches are created in the background
    const body = await expectRefused(
      t,
      () => t.call('POST', url, { scorer_uids: [scorer.uid, unknown, narrow.uid] }),
      422,
      'invalid_selection',
    );
    expect(body.errors.map((e: { path: string }) => e.path)).toEqual(['body.scorer_uids[1]', 'body.scorer_uids[2]']);

    // A run nobody executed yet has no conversation; a run of no agent is not a factory agent's.
    const silent = await agentRun(t, agent.uid);
    const plain = (await t.call('POST', '/agent/runs', { prompt: 'x' })).json().run_id;
    const judgeRunId = await (async () => {
      await t.call('POST', url, { scorer_uids: [scorer.uid] });
      return (await judgeOf(worker, runId)).run_id;
    })();
    await quiet(t);
    const many = await expectRefused(
      t,
      () =>
        t.call('POST', `/factory/${factory}/scorers/${scorer.uid}/dispatch`, {
          run_ids: [runId, silent, plain, judgeRunId, unknown],
        }),
      422,
    );
    expect(many.errors.map((e: { path: string }) => e.path)).toEqual([
      'body.run_ids[1]',
      'body.run_ids[2]',
      'body.run_ids[3]',
      'body.run_ids[4]',
    ]);
    const elsewhere = await newFactory(t);
    await expectRefused(
      t,
      () => t.call('POST', `/factory/${elsewhere}/runs/${runId}/scorer_dispatch`, { scorer_uids: [scorer.uid] }),
      422,
    );

    // Malformed requests, and who may dispatch.
    for (const scorer_uids of [
      [],
      ['not-a-uuid'],
      ['00000000-0000-0000-0000-000000000000'],
      Array(101).fill(scorer.uid),
    ])
      await expectRefused(t, () => t.call('POST', url, { scorer_uids }), 400);
    await expectRefused(t, () => t.call('POST', url, { scorer_uids: [scorer.uid] }, agent.key), 403);
    expectProblem(
      await t.call('POST', `/factory/${factory}/runs/${unknown}/scorer_dispatch`, { scorer_uids: [scorer.uid] }),
      404,
    );
  });
});
