/**
 * Scorers through the real app: create, list, read, update and delete with every validation rule;
 * automatic judging of finished runs by judge runs that a worker executes; results, a run's
 * scores and metrics, with pass and fail derived against the threshold of the moment, and what
 * the judge runs cost as the cost ledger priced their tokens and machine time (a price list with
 * round numbers).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { tokens } from '../../helpers/analytics-fixtures.js';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';
import {
  agentRun,
  CLASSIFICATIONS,
  factoryAgent,
  judgeOf,
  newScorer,
  roundPriceList,
  simulatedWorker,
} from '../../helpers/scorer-fixtures.js';
import { eventually, newFactory, newMember } from '../../helpers/task-fixtures.js';

const clock = manualClock('2026-04-01T10:00:00Z');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-scorer-prices-'));
let t: TestApp;
beforeAll(async () => {
  // Machine time at $1.20 an hour: $0.01 for 30 seconds.
  t = await startTestApp({ MODELS_FILE: roundPriceList(dir, { computeUsdPerHour: 1.2 }) }, clock);
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('scorer management', () => {
  it('creates a scorer, lists it with its counts, reads, updates (a new version each time) and deletes it', async () => {
    const factory = await newFactory(t);
    const a = await factoryAgent(t, factory, 'Implementer');
    const b = await factoryAgent(t, factory, 'Reviewer');
    const created = await newScorer(t, factory, {
      scope_mode: 'selected_agents',
      agents: [{ uid: a.uid, include_descendants: true }],
      sampling_rate: 12.345,
      description: 'The compliance check',
      agent_config: { secrets: [{ name: 'JUDGE_KEY' }] },
    });
    expect(created).toMatchObject({
      id: created.uid,
      factory_uid: factory,
      name: 'Task compliance',
      description: 'The compliance check',
      model_id: 'claude-4-6-sonnet',
      threshold: 1,
      allowed_classifications: [
        { value: 'compliant', score: 1, description: 'Did everything asked' },
        { value: 'partial', score: 0.5, description: null },
        { value: 'non_compliant', score: 0, description: null },
      ],
      scope_mode: 'selected_agents',
      agent_uids: [a.uid],
      agents: [{ uid: a.uid, name: 'Implementer', include_descendants: true }],
      sampling_rate: 12.35,
      scorer_kind: 'user',
      agent_config: { default_runner_uid: null, mcp_servers: null, secrets: [{ name: 'JUDGE_KEY' }] },
      version: 1,
      self_improvement_enabled: false,
      failed_run_threshold: 25,
    });

    const listed = await t.call('GET', `/factory/${factory}/scorers`);
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().scorers).toEqual([
      expect.objectContaining({
        uid: created.uid,
        result_count: 0,
        last_scored_at: null,
        pass_rate_summary: { pass_count: 0, fail_count: 0, pass_rate: null, recent_outcomes: [] },
      }),
    ]);
    // The hosted SDK's forms.
    const viaSdk = await t.call('GET', `/factory/scorers?factory_uid=${factory}`);
    expect(viaSdk.json().scorers.map((s: { uid: string }) => s.uid)).toEqual([created.uid]);

    // Giving agent_uids replaces the scope in full (legacy form: include_descendants false).
    const patched = await t.call('PATCH', `/factory/${factory}/scorers/${created.uid}`, { agent_uids: [b.uid] });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({
      version: 2,
      scope_mode: 'selected_agents',
      agents: [{ uid: b.uid, name: 'Reviewer', include_descendants: false }],
    });
    const allAgents = await t.call('PATCH', `/factory/${factory}/scorers/${created.uid}`, {
      scope_mode: 'all_agents',
      threshold: 0.5,
    });
    expect(allAgents.json()).toMatchObject({ version: 3, scope_mode: 'all_agents', agent_uids: [], threshold: 0.5 });
    // The same values again change nothing, and bump nothing.
    const same = await t.call('PATCH', `/factory/${factory}/scorers/${created.uid}`, { threshold: 0.5 });
    expect(same.json().version).toBe(3);
    expect((await t.call('GET', `/factory/${factory}/scorers/${created.uid}`)).json()).toMatchObject({ version: 3 });

    const deleted = await t.call('DELETE', `/factory/${factory}/scorers/${created.uid}`);
    expect(deleted.statusCode, deleted.body).toBe(204);
    expectProblem(await t.call('GET', `/factory/${factory}/scorers/${created.uid}`), 404);
    expect((await t.call('GET', `/factory/${factory}/scorers`)).json().scorers).toEqual([]);
    // Auditors still find that it existed, and who deleted it when.
    const history = await t.call('GET', `/factory/${factory}/scorers/${created.uid}/history`);
    expect(history.json().entries.map((e: { type: string }) => e.type)).toEqual([
      'ScorerCreated',
      'ScorerUpdated',
      'ScorerUpdated',
      'ScorerDeleted',
    ]);
    expect(history.json().entries.at(-1).actor).toEqual({ type: 'user', uid: t.adminUid });
  });

  it('takes the SDK form POST /factory/scorers with the factory in the body', async () => {
    const factory = await newFactory(t);
    const res = await t.call('POST', '/factory/scorers', {
      factory_uid: factory,
      name: 'Quick',
      scoring_prompt: 'Was it quick?',
      model_id: 'gpt-5-4-mini',
      threshold: 0.5,
      allowed_classifications: [
        { value: 'yes', score: 1 },
        { value: 'no', score: 0 },
      ],
      scope_mode: 'all_agents',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ factory_uid: factory, sampling_rate: 100 });
  });

  const valid = {
    name: 'Checks',
    scoring_prompt: 'Judge it',
    model_id: 'claude-4-6-sonnet',
    threshold: 0.5,
    allowed_classifications: [
      { value: 'good', score: 1 },
      { value: 'bad', score: 0 },
    ],
    scope_mode: 'all_agents',
  };
  it.each([
    [{ threshold: 1.5 }, 'body.threshold'],
    [{ threshold: -0.1 }, 'body.threshold'],
    [{ allowed_classifications: [] }, 'body.allowed_classifications'],
    [{ allowed_classifications: [{ value: 'good', score: 2 }] }, 'body.allowed_classifications.0.score'],
    [
      {
        allowed_classifications: [
          { value: 'same', score: 1 },
          { value: 'same', score: 0 },
        ],
      },
      'body.allowed_classifications',
    ],
    [
      {
        allowed_classifications: [
          { value: 'a', score: 0.2 },
          { value: 'b', score: 0.3 },
        ],
      },
      'body.allowed_classifications',
    ],
    [
      {
        allowed_classifications: [
          { value: 'a', score: 0.7 },
          { value: 'b', score: 0.9 },
        ],
      },
      'body.allowed_classifications',
    ],
    [{ sampling_rate: 100.5 }, 'body.sampling_rate'],
    [{ sampling_rate: -1 }, 'body.sampling_rate'],
    [{ scope_mode: 'some_agents' }, 'body.scope_mode'],
    [{ scope_mode: 'selected_agents' }, 'body.agent_uids'],
    [{ agent_uids: ['x'] }, 'body.agent_uids'],
    [{ scope_mode: 'selected_agents', agent_uids: ['no-such-agent'] }, 'body.agent_uids[0]'],
    [{ scope_mode: 'selected_agents', agents: [{ uid: 'x' }], agent_uids: ['x'] }, 'body.agent_uids'],
    [{ model_id: 'no-such-model' }, 'body.model_id'],
    [{ name: '' }, 'body.name'],
    [{ scoring_prompt: 'a rubric over 50,000 characters' }, 'body.scoring_prompt'],
    [{ failed_run_threshold: 51 }, 'body.failed_run_threshold'],
    [{ agent_config: { mcp_servers: { deep: 'nested 40 levels deep' } } }, 'body.agent_config.mcp_servers'],
    [{ unknown_field: true }, 'body'],
  ])('refuses %j naming %s, writing nothing', async (change, path) => {
    const factory = await newFactory(t);
    // Values too large to name in the test's title.
    const large: Record<string, unknown> = {
      'a rubric over 50,000 characters': 'x'.repeat(50_001),
      'nested 40 levels deep': JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`),
    };
    const sent = JSON.parse(JSON.stringify({ ...valid, ...change }), (_k, v) =>
      typeof v === 'string' && v in large ? large[v] : v,
    );
    const body = await expectRefused(t, () => t.call('POST', `/factory/${factory}/scorers`, sent), 400);
    expect(body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('refuses a PATCH that changes nothing, or breaks the rules with the scorer as it is; agents may not manage', async () => {
    const factory = await newFactory(t);
    const scorer = await newScorer(t, factory);
    const url = `/factory/${factory}/scorers/${scorer.uid}`;
    await expectRefused(t, () => t.call('PATCH', url, {}), 400);
    // Threshold 0 leaves no classification below it.
    const body = await expectRefused(t, () => t.call('PATCH', url, { threshold: 0 }), 400);
    expect(body.errors[0].path).toBe('body.allowed_classifications');
    await expectRefused(t, () => t.call('PATCH', url, { factory_uid: factory }), 400);
    const agent = await factoryAgent(t, factory);
    await expectRefused(t, () => t.call('PATCH', url, { name: 'x' }, agent.key), 403);
    await expectRefused(t, () => t.call('DELETE', url, undefined, agent.key), 403);
    // Agents of the team read scorers.
    expect((await t.call('GET', url, undefined, agent.key)).statusCode).toBe(200);
    // Another team sees nothing.
    const team = await t.call('POST', '/teams', { name: 'Other' });
    const stranger = await newMember(t, team.json().uid);
    await expectRefused(t, () => t.call('GET', url, undefined, stranger.key), 404);
    await expectRefused(t, () => t.call('DELETE', url, undefined, stranger.key), 404);
    await expectRefused(t, () => t.call('GET', `/factory/${factory}/scorers`, undefined, stranger.key), 404);
  });
});

describe('judging', () => {
  it('judges a finished run of a factory agent with a judge run a worker executes; pass and fail follow the threshold', async () => {
    const factory = await newFactory(t);
    const agent = await factoryAgent(t, factory);
    const scorer = await newScorer(t, factory, { threshold: 0.5 });
    const worker = await simulatedWorker(t, agent.key).announce();

    const runId = await agentRun(t, agent.uid);
    await worker.execute(await worker.claimWhere((r) => r.run_id === runId), 'Changelog updated; tests pass');

    const judge = await judgeOf(worker, runId);
    expect(judge).toMatchObject({ source: 'RUN_SCORER', metadata: { scorer_uid: scorer.uid, scored_run_id: runId } });
    expect(judge.prompt).toContain('Did the agent do what the task asked');
    expect(judge.prompt).toContain('`partial` (score 0.5)');
    expect(judge.prompt).toContain('Changelog updated; tests pass');
    expect(judge.attachments.map((a) => a.file_name)).toEqual([
      'rubric.md',
      'classifications.json',
      'conversation.json',
    ]);
    const link = new URL(judge.attachments[2]!.download_url);
    const conversation = (await t.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` })).json();
    expect(JSON.stringify(conversation)).toContain('Changelog updated; tests pass');

    const results = `/factory/${factory}/scorers/${scorer.uid}/results`;
    expect((await t.call('GET', results)).json().results).toEqual([
      expect.objectContaining({ run_id: runId, status: 'in_flight', is_in_flight: true, classification: null }),
    ]);

    // The judge works 30 s and reports 10,000 input and 2,000 output tokens of Sonnet.
    clock.advance(60_000);
    await worker.report(judge, 'claim');
    await worker.report(judge, 'start');
    clock.advance(30_000);
    await worker.report(judge, 'usage', tokens('claude-4-6-sonnet', { input: 10_000, output: 2000 }));
    const answer = await worker.report(
      judge,
      'judgement',
      { classification: 'partial', reasoning: 'Tests ran, but the changelog misses the date.' },
      [201],
    );
    expect(answer.json()).toMatchObject({ status: 'scored', score: 0.5 });
    await worker.report(judge, 'finish', { state: 'SUCCEEDED' });
    await eventually(async () =>
      (await t.call('GET', results)).json().results[0].scoring_run_time !== null ? true : undefined,
    );

    const [result] = (await t.call('GET', `${results}?include_reasons=true`)).json().results;
    expect(result).toMatchObject({
      run_id: runId,
      status: 'scored',
      is_in_flight: false,
      trigger: 'automatic',
      classification: 'partial',
      score: 0.5,
      outcome: 'pass',
      scoring_run_id: judge.run_id,
      // By hand: 10,000 × $1 + 2,000 × $5 per million = $0.01 + $0.01 = $0.02 of inference (2
      // credits at $0.01); 30 s of machine time at $1.20 an hour = $0.01 (1 credit); no platform rate.
      scoring_run_usage: {
        inference_cost: 2,
        compute_cost: 1,
        platform_cost: 0,
        inference_cost_usd: 0.02,
        compute_cost_usd: 0.01,
        platform_cost_usd: 0,
        total_tokens: 12_000,
      },
      reason: 'Tests ran, but the changelog misses the date.',
      reason_status: 'available',
    });
    // Reasons are read only when asked for.
    expect((await t.call('GET', results)).json().results[0]).not.toHaveProperty('reason');

    const scores = (await t.call('GET', `/factory/runs/${runId}/scores`)).json().scores;
    expect(scores).toEqual([expect.objectContaining({ scorer_uid: scorer.uid, outcome: 'pass', score: 0.5 })]);

    // The judge's request_usage is the same figure.
    expect((await t.call('GET', `/agent/runs/${judge.run_id}`)).json().request_usage).toEqual(result.scoring_run_usage);

    const metrics = `/factory/${factory}/scorers/${scorer.uid}/metrics`;
    expect((await t.call('GET', `${metrics}?include_cost=true`)).json()).toMatchObject({
      score_count: 1,
      pass_count: 1,
      fail_count: 0,
      pass_rate: 1,
      cost: { judge_run_count: 1, dollars: { inference: 0.02, compute: 0.01, platform: 0, total: 0.03 } },
    });

    // A stricter threshold re-derives the past: the same score now fails, everywhere.
    await t.call('PATCH', `/factory/${factory}/scorers/${scorer.uid}`, { threshold: 1 });
    expect((await t.call('GET', results)).json().results[0]).toMatchObject({ outcome: 'fail', score: 0.5 });
    expect((await t.call('GET', metrics)).json()).toMatchObject({ pass_count: 0, fail_count: 1, pass_rate: 0 });
    expect((await t.call('GET', `/factory/${factory}/scorers`)).json().scorers[0]).toMatchObject({
      result_count: 1,
      pass_rate_summary: { pass_count: 0, fail_count: 1, pass_rate: 0, recent_outcomes: ['fail'] },
    });
  });

  it('fails the attempt on a classification the scorer does not allow, and judges only what it samples and scopes', async () => {
    const factory = await newFactory(t);
    const agent = await factoryAgent(t, factory);
    const other = await factoryAgent(t, factory, 'Other');
    const scorer = await newScorer(t, factory, { scope_mode: 'selected_agents', agent_uids: [agent.uid] });
    await newScorer(t, factory, { name: 'Never automatic', sampling_rate: 0 });
    const worker = await simulatedWorker(t, agent.key).announce();

    const outOfScope = await agentRun(t, other.uid);
    await worker.execute(await worker.claimWhere((r) => r.run_id === outOfScope));
    const runId = await agentRun(t, agent.uid);
    await worker.execute(await worker.claimWhere((r) => r.run_id === runId));

    const judge = await judgeOf(worker, runId);
    const answer = await worker.judge(judge, 'excellent', 'Made up a label');
    expect(answer).toMatchObject({ status: 'failed', score: null });
    expect(answer.error).toMatch(/not allowed/);
    const results = (
      await t.call('GET', `/factory/${factory}/scorers/${scorer.uid}/results?include_reasons=true`)
    ).json().results;
    expect(results).toEqual([
      expect.objectContaining({ run_id: runId, status: 'failed', classification: null, reason_status: 'absent' }),
    ]);
    // No other judge run was queued: not for the run out of scope, nor by the scorer sampling 0%.
    expect(await worker.claim()).toBeNull();
    const judges = (await t.call('GET', `/agent/runs?source=RUN_SCORER&factory_uid=${factory}`)).json().runs;
    expect(judges).toHaveLength(1);
  });

  it('refuses results queries the spec rules out', async () => {
    const factory = await newFactory(t);
    const scorer = await newScorer(t, factory);
    const url = `/factory/${factory}/scorers/${scorer.uid}`;
    expectProblem(await t.call('GET', `${url}/results?run_id=a&limit=5`), 400);
    expectProblem(await t.call('GET', `${url}/results?run_id=a&cursor=x`), 400);
    expectProblem(await t.call('GET', `${url}/results?run_id=%20`), 400);
    expectProblem(await t.call('GET', `${url}/results?limit=101`), 400);
    expectProblem(await t.call('GET', `${url}/results?cursor=nonsense`), 400);
    expect((await t.call('GET', `${url}/results?run_id=unknown&run_id=unknown`)).json().results).toEqual([]);
    expectProblem(
      await t.call('GET', `${url}/metrics?start_date=2026-03-02T00:00:00Z&end_date=2026-03-01T00:00:00Z`),
      400,
    );
    expectProblem(await t.call('GET', `${url}/metrics?group_by_period=year`), 400);
    expectProblem(
      await t.call('GET', `${url}/metrics?start_date=2020-01-01T00:00:00Z&end_date=2026-01-01T00:00:00Z`),
      400,
    );
    expect(
      (
        await t.call(
          'GET',
          `${url}/metrics?start_date=2020-01-01T00:00:00Z&end_date=2026-01-01T00:00:00Z&group_by_period=month`,
        )
      ).statusCode,
    ).toBe(200);
    expectProblem(await t.call('GET', `/factory/${factory}/scorers?start_date=2026-01-01T00:00:00Z`), 400);
    expect(CLASSIFICATIONS).toHaveLength(3);
  });
});
