/**
 * What guardrail decisions tell, through the real app: outbound webhook events
 * (`run.approval_requested`, `run.approved`, `run.denied`, `budget.threshold_reached`,
 * `budget.exceeded`) scheduled for the team's endpoints, and inbox notices to the team's admins
 * (a run waiting for approval until decided; a budget's threshold; one notice for a month's
 * refusals, not one per refusal).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { newWorker, priceListFile, tokens, type Worker } from '../../helpers/analytics-fixtures.js';
import { claimRun, settleGuards } from '../../helpers/guardrail-fixtures.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-notices-'));
const clock = manualClock('2026-03-02T09:00:00Z');
let t: TestApp;
let endpoint: string;
let worker: Worker;

beforeAll(async () => {
  t = await startTestApp({ MODELS_FILE: priceListFile(dir), OUTBOUND_ALLOWED_RANGES: '127.0.0.0/8' }, clock);
  worker = await newWorker(t, null);
  const res = await t.call('POST', `/teams/${t.teamUid}/outbound-webhooks`, {
    url: 'http://127.0.0.1:9/hooks',
    event_types: ['budget.*', 'run.approval_requested', 'run.approved', 'run.denied'],
  });
  expect(res.statusCode, res.body).toBe(201);
  endpoint = res.json().uid;
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const told = async () => {
  await settleGuards(t);
  const res = await t.call('GET', `/teams/${t.teamUid}/outbound-webhooks/${endpoint}/deliveries?limit=100`);
  return (res.json().deliveries as Array<{ event_type: string; payload: { data: Record<string, unknown> } }>).reverse();
};
const inbox = async () =>
  (await t.call('GET', '/factory-inbox?scope=team')).json().notifications as Array<{
    kind: string;
    title: string;
    run_id?: string;
  }>;

describe('approvals', () => {
  it('tell the endpoints and the admins’ inbox, until decided', async () => {
    await t.call('PUT', `/teams/${t.teamUid}/limits`, { requires_approval: true });
    const first = (await t.call('POST', '/agent/runs', { prompt: 'One', title: 'First' })).json().run_id;
    const second = (await t.call('POST', '/agent/runs', { prompt: 'Two', title: 'Second' })).json().run_id;
    await settleGuards(t);
    expect(
      (await inbox())
        .filter((n) => n.kind === 'approval')
        .map((n) => n.run_id)
        .sort(),
    ).toEqual([first, second].sort());
    await t.call('POST', `/agent/runs/${first}/approve`);
    await t.call('POST', `/agent/runs/${second}/deny`, { reason: 'no' });
    await t.call('PUT', `/teams/${t.teamUid}/limits`, {});
    // Scheduled at one moment of the test's clock: compared as a set.
    const events = (await told()).map((d) => `${d.event_type} ${d.payload.data.run_id}`);
    expect(events.sort()).toEqual(
      [
        `run.approval_requested ${first}`,
        `run.approval_requested ${second}`,
        `run.approved ${first}`,
        `run.denied ${second}`,
      ].sort(),
    );
    expect((await inbox()).filter((n) => n.kind === 'approval')).toEqual([]);
  });
});

describe('budgets', () => {
  it('tell a threshold once, and a month’s refusals once', async () => {
    await t.call('PUT', `/teams/${t.teamUid}/budget`, { monthly_usd: 5, per_run_usd: 4, notify_at: [0.5] });
    const runId = (await t.call('POST', '/agent/runs', { prompt: 'Spend' })).json().run_id;
    const claim = await claimRun(t, worker, runId);
    const report = (what: string, body?: unknown) =>
      t.call('POST', `/agent/workers/${worker.workerId}/runs/${runId}/${what}`, body, worker.key, {
        'x-execution-id': claim.execution_id,
      });
    await report('claim');
    await report('start');
    await report('usage', tokens('big', { input: 300_000 })); // $3: past half of $5
    await report('usage', tokens('big', { input: 310_000 })); // $3.10: nothing new to tell
    // $3.10 spent and $0.90 still held: a start reserving $4 has no room.
    for (let i = 0; i < 3; i++) expect((await t.call('POST', '/agent/runs', { prompt: 'More' })).statusCode).toBe(402);
    const budgetEvents = (await told()).filter((d) => d.event_type.startsWith('budget.'));
    expect(budgetEvents.map((d) => d.event_type).sort()).toEqual(['budget.exceeded', 'budget.threshold_reached']);
    expect(budgetEvents.find((d) => d.event_type === 'budget.threshold_reached')!.payload.data).toEqual({
      budget: { kind: 'team', team_uid: t.teamUid, period: '2026-03' },
      fraction: 0.5,
      spent_usd: 3,
      monthly_usd: 5,
    });
    const notices = (await inbox()).filter((n) => n.kind === 'budget').map((n) => n.title);
    expect(notices.sort()).toEqual([
      'The team budget passed 50% of its month (2026-03)',
      'The team budget refused runs (2026-03)',
    ]);
  });
});
