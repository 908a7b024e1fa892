/**
 * Budgets through the real app on real SQLite stores: who may set and read them, the room a month
 * leaves decided on the period stream (thirty concurrent starts, room for ten), refusals answered
 * 402 `budget_exceeded` naming the budget, settlement when runs end, and the per-run cap cancelling
 * a run from its priced usage.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';
import { newWorker, priceListFile, tokens, type Worker } from '../../helpers/analytics-fixtures.js';
import { claimRun, settleGuards } from '../../helpers/guardrail-fixtures.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-budgets-'));
const clock = manualClock('2026-03-02T09:00:00Z');
let t: TestApp;
let worker: Worker;

beforeAll(async () => {
  t = await startTestApp({ MODELS_FILE: priceListFile(dir) }, clock);
  worker = await newWorker(t, null);
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const newTeam = async (name: string) => (await t.call('POST', '/teams', { name })).json().uid as string;
const start = (team: string, body: Record<string, unknown> = {}) =>
  t.call('POST', '/agent/runs', { prompt: 'Fix it', ...body }, undefined, { 'x-service-team-uid': team });

describe('setting a budget', () => {
  it('is for team admins; members read it with this month and its figures', async () => {
    const team = await newTeam('Budgeted');
    const member = await t.addMember(team, { email: 'reader@example.com', role: 'member' });
    await expectRefused(t, () => t.call('PUT', `/teams/${team}/budget`, { monthly_usd: 5 }, member.api_key), 403);
    const put = await t.call('PUT', `/teams/${team}/budget`, { monthly_usd: 5, per_run_usd: 1 });
    expect(put.statusCode, put.body).toBe(200);
    const read = await t.call('GET', `/teams/${team}/budget`, undefined, member.api_key);
    expect(read.json()).toEqual({
      monthly_usd: 5,
      per_run_usd: 1,
      notify_at: [0.5, 0.8, 1],
      period_start: '2026-03-01T00:00:00.000Z',
      period_end: '2026-04-01T00:00:00.000Z',
      spent_usd: 0,
      reserved_usd: 0,
      remaining_usd: 5,
    });
    expect((await t.call('DELETE', `/teams/${team}/budget`)).statusCode).toBe(204);
    expectProblem(await t.call('GET', `/teams/${team}/budget`), 404, 'resource_not_found');
  });

  it('refuses bad bodies naming the field, and writes nothing', async () => {
    const team = await newTeam('Picky');
    for (const [body, field] of [
      [{ monthly_usd: -1 }, 'monthly_usd'],
      [{ monthly_usd: 5, per_run_usd: 0 }, 'per_run_usd'],
      [{ monthly_usd: 5, notify_at: [0.5, 0.5] }, 'notify_at'],
      [{ monthly_usd: 5, extra: 1 }, ''],
      [{}, 'monthly_usd'],
    ] as const) {
      const problem = await expectRefused(t, () => t.call('PUT', `/teams/${team}/budget`, body), 400);
      expect(JSON.stringify(problem.errors)).toContain(field);
    }
    await expectRefused(t, () => t.call('PUT', '/teams/not-mine/budget', { monthly_usd: 5 }), 404);
    await expectRefused(t, () => t.call('PUT', '/factory/nope/budget', { monthly_usd: 5 }), 404);
  });
});

describe('starting runs against a budget', () => {
  it('thirty concurrent starts with room for ten start ten and refuse twenty with budget_exceeded', async () => {
    const team = await newTeam('Ten runs');
    await t.call('PUT', `/teams/${team}/budget`, { monthly_usd: 10, per_run_usd: 1 });
    const answers = await Promise.all(Array.from({ length: 30 }, () => start(team)));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(20);
    const refused = answers.find((a) => a.statusCode === 402)!;
    expect(expectProblem(refused, 402, 'budget_exceeded').budget).toEqual({
      kind: 'team',
      team_uid: team,
      period: '2026-03',
    });
    const budget = (await t.call('GET', `/teams/${team}/budget`)).json();
    expect(budget).toMatchObject({ spent_usd: 0, reserved_usd: 10, remaining_usd: 0 });
    const runs = await t.call('GET', '/agent/runs?limit=100', undefined, undefined, { 'x-service-team-uid': team });
    expect(runs.json().runs).toHaveLength(10);
  });

  it('gives back an ended run’s reservation, and a personal run is under no team budget', async () => {
    const team = await newTeam('One at a time');
    await t.call('PUT', `/teams/${team}/budget`, { monthly_usd: 1, per_run_usd: 1 });
    const first = await start(team);
    expect(first.statusCode).toBe(200);
    expectProblem(await start(team), 402, 'budget_exceeded');
    expect((await start(team, { team: false })).statusCode).toBe(200);
    await t.call('POST', `/agent/runs/${first.json().run_id}/cancel`, undefined, undefined, {
      'x-service-team-uid': team,
    });
    await settleGuards(t);
    await waitForReserved(team, 0);
    expect((await start(team)).statusCode).toBe(200);
  });

  it('a factory budget refuses the factory’s runs, its sub-runs too', async () => {
    const factory = (await t.call('POST', '/factory', { name: 'Capped' })).json().uid;
    await t.call('POST', '/agent/identities', { name: 'Capped Foreman', agent_type: 'FOREMAN', factory_uid: factory });
    await t.call('PUT', `/factory/${factory}/budget`, { monthly_usd: 2, per_run_usd: 1 });
    const dispatched = await t.call('POST', `/factory/${factory}/runs`, { prompt: 'Go' });
    expect(dispatched.statusCode, dispatched.body).toBe(201);
    const parent = dispatched.json().run_id;
    expect((await t.call('POST', '/agent/runs', { prompt: 'child', parent_run_id: parent })).statusCode).toBe(200);
    const third = await t.call('POST', '/agent/runs', { prompt: 'child 2', parent_run_id: parent });
    expect(expectProblem(third, 402, 'budget_exceeded').budget).toMatchObject({
      kind: 'factory',
      factory_uid: factory,
    });
  });

  it('a member budget caps the runs a person starts in the team', async () => {
    const team = await newTeam('Members');
    const member = await t.addMember(team, { email: 'spender@example.com', role: 'member' });
    await t.call('PUT', `/teams/${team}/members/${member.user.uid}/budget`, { monthly_usd: 1, per_run_usd: 1 });
    const as = (key?: string) => t.call('POST', '/agent/runs', { prompt: 'x' }, key, { 'x-service-team-uid': team });
    expect((await as(member.api_key)).statusCode).toBe(200);
    expectProblem(await as(member.api_key), 402, 'budget_exceeded');
    expect((await as()).statusCode).toBe(200);
  });
});

describe('a follow-up that resumes an ended run', () => {
  it('is a start: refused with no room, and reserves when there is', async () => {
    const team = await newTeam('Resumes');
    await t.call('PUT', `/teams/${team}/budget`, { monthly_usd: 1, per_run_usd: 1 });
    const headers = { 'x-service-team-uid': team };
    const ended = (await start(team)).json().run_id;
    await t.call('POST', `/agent/runs/${ended}/cancel`, undefined, undefined, headers);
    await waitForReserved(team, 0);
    const other = (await start(team)).json().run_id;
    const followup = () => t.call('POST', `/agent/runs/${ended}/followups`, { message: 'again' }, undefined, headers);
    expectProblem(await followup(), 402, 'budget_exceeded');
    await t.call('POST', `/agent/runs/${other}/cancel`, undefined, undefined, headers);
    await waitForReserved(team, 0);
    const resumed = await followup();
    expect(resumed.json()).toMatchObject({ state: 'QUEUED', routed_to: 'new_execution' });
    expect((await t.call('GET', `/teams/${team}/budget`)).json().reserved_usd).toBe(1);
    // A follow-up to a queued run joins its prompt: no start, nothing more reserved.
    expect((await followup()).json().routed_to).toBe('queued_prompt');
    expect((await t.call('GET', `/teams/${team}/budget`)).json().reserved_usd).toBe(1);
  });
});

async function waitForReserved(team: string, usd: number) {
  for (let i = 0; i < 250; i++) {
    const budget = (await t.call('GET', `/teams/${team}/budget`)).json();
    if (budget.reserved_usd === usd) return budget;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`reserved never came to ${usd}`);
}

describe('the per-run cap', () => {
  it('cancels a run whose priced usage passes it, and counts what it spent', async () => {
    await t.call('PUT', `/teams/${t.teamUid}/budget`, { monthly_usd: 100, per_run_usd: 2 });
    const runId = (await t.call('POST', '/agent/runs', { prompt: 'Spend' })).json().run_id;
    const claim = await claimRun(t, worker, runId);
    const report = (what: string, body?: unknown) =>
      t.call('POST', `/agent/workers/${worker.workerId}/runs/${runId}/${what}`, body, worker.key, {
        'x-execution-id': claim.execution_id,
      });
    await report('claim');
    await report('start');
    // big: 0.1 M input × $10 = $1, under the cap; then 0.3 M = $3, over it.
    expect((await report('usage', tokens('big', { input: 100_000 }))).statusCode).toBeLessThan(300);
    await settleGuards(t);
    expect((await t.call('GET', `/agent/runs/${runId}`)).json().state).toBe('INPROGRESS');
    expect((await report('usage', tokens('big', { input: 300_000 }))).statusCode).toBeLessThan(300);
    await settleGuards(t);
    const run = (await t.call('GET', `/agent/runs/${runId}`)).json();
    expect(run.state).toBe('CANCELLED');
    const history = (await t.call('GET', `/agent/runs/${runId}/history`)).json();
    const cancelled = JSON.stringify(history).match(/per-run budget cap[^"]*/);
    expect(cancelled?.[0]).toContain('$3 of $2');
    const budget = await waitForReserved(t.teamUid, 0);
    expect(budget.spent_usd).toBeGreaterThanOrEqual(3);
  });
});
