/**
 * Approvals through the real app: a factory (its limits) requiring approval keeps its runs QUEUED
 * with `approval: pending`, never handed to a worker; team admins (people, not agents) approve or
 * deny; a pending approval expires after its timeout and the run is cancelled; who decided and
 * when is on the run and in its history. A waiting run reserves no budget until approved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';
import { newWorker, type Worker } from '../../helpers/analytics-fixtures.js';
import { settleGuards } from '../../helpers/guardrail-fixtures.js';
import { eventually } from '../../helpers/task-fixtures.js';

const clock = manualClock('2026-03-02T09:00:00Z');
let t: TestApp;
let factory: string;
let worker: Worker;
let member: { api_key: string };

beforeAll(async () => {
  t = await startTestApp({ GUARDRAIL_SWEEP_SECONDS: '0.05' }, clock);
  factory = (await t.call('POST', '/factory', { name: 'Careful' })).json().uid;
  await t.call('POST', '/agent/identities', { name: 'Careful Foreman', agent_type: 'FOREMAN', factory_uid: factory });
  worker = await newWorker(t, factory);
  member = await t.addMember(t.teamUid, { email: 'approver-not@example.com', role: 'member' });
  const limits = await t.call('PUT', `/factory/${factory}/limits`, {
    requires_approval: true,
    approval_timeout_minutes: 60,
  });
  expect(limits.statusCode, limits.body).toBe(200);
});
afterAll(() => t.close());

const dispatch = async () => {
  const res = await t.call('POST', `/factory/${factory}/runs`, { prompt: 'Deploy' });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().run_id as string;
};
const run = async (id: string) => (await t.call('GET', `/agent/runs/${id}`)).json();
const claim = () => t.call('POST', `/agent/workers/${worker.workerId}/claim`, undefined, worker.key);

describe('a factory that requires approval', () => {
  it('keeps its runs QUEUED, pending, and never hands them to a worker', async () => {
    const id = await dispatch();
    expect(await run(id)).toMatchObject({
      state: 'QUEUED',
      approval: {
        state: 'pending',
        rule: 'factory',
        requested_at: '2026-03-02T09:00:00.000Z',
        expires_at: '2026-03-02T10:00:00.000Z',
        decided_by: null,
        decided_at: null,
      },
    });
    expect((await claim()).statusCode).toBe(204);
    await t.call('POST', `/agent/runs/${id}/deny`, {});
  });

  it('is approved by a team admin: then a worker may take it, and the history says who and when', async () => {
    const id = await dispatch();
    await expectRefused(t, () => t.call('POST', `/agent/runs/${id}/approve`, undefined, member.api_key), 403);
    await expectRefused(t, () => t.call('POST', `/agent/runs/${id}/approve`, undefined, worker.key), 403);
    clock.set('2026-03-02T09:10:00Z');
    const approved = await t.call('POST', `/agent/runs/${id}/approve`);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toEqual({
      run_id: id,
      state: 'QUEUED',
      approval: {
        state: 'approved',
        decided_by: { type: 'user', uid: t.adminUid },
        decided_at: '2026-03-02T09:10:00.000Z',
      },
    });
    await expectRefused(t, () => t.call('POST', `/agent/runs/${id}/approve`), 409, 'not_pending_approval');
    expect((await run(id)).queue_position).toBe(1);
    const claimed = await claim();
    expect(claimed.statusCode, claimed.body).toBe(200);
    expect(claimed.json().run.run_id).toBe(id);
    const { entries } = (await t.call('GET', `/agent/runs/${id}/history`)).json();
    expect(entries.find((e: { type: string }) => e.type === 'RunApproved')).toMatchObject({
      actor: { type: 'user', uid: t.adminUid },
      occurred_at: '2026-03-02T09:10:00.000Z',
      data: { by: { type: 'user', uid: t.adminUid }, at: '2026-03-02T09:10:00.000Z' },
    });
  });

  it('is denied by a team admin: the run is cancelled with the reason', async () => {
    const id = await dispatch();
    const denied = await t.call('POST', `/agent/runs/${id}/deny`, { reason: 'not today' });
    expect(denied.statusCode, denied.body).toBe(200);
    expect(denied.json()).toMatchObject({ state: 'CANCELLED', approval: { state: 'denied' } });
    expect((await run(id)).approval.state).toBe('denied');
  });

  it('expires after its timeout: the run is cancelled with that reason', async () => {
    clock.set('2026-03-02T11:00:00Z');
    const id = await dispatch();
    clock.set('2026-03-02T12:00:01Z');
    const expired = await eventually(async () => {
      const r = await run(id);
      return r.state === 'CANCELLED' ? r : undefined;
    });
    expect(expired.approval).toMatchObject({ state: 'expired', decided_at: '2026-03-02T12:00:01.000Z' });
  });

  it('reserves no budget while waiting, and an approval with no room is refused budget_exceeded', async () => {
    clock.set('2026-03-02T13:00:00Z');
    await t.call('PUT', `/factory/${factory}/budget`, { monthly_usd: 1, per_run_usd: 1 });
    const first = await dispatch();
    const second = await dispatch();
    expect((await t.call('GET', `/factory/${factory}/budget`)).json().reserved_usd).toBe(0);
    expect((await t.call('POST', `/agent/runs/${first}/approve`)).statusCode).toBe(200);
    expect((await t.call('GET', `/factory/${factory}/budget`)).json().reserved_usd).toBe(1);
    expectProblem(await t.call('POST', `/agent/runs/${second}/approve`), 402, 'budget_exceeded');
    expect((await run(second)).approval.state).toBe('pending');
    await t.call('DELETE', `/factory/${factory}/budget`);
    await settleGuards(t);
  });
});

describe('an automation that requires approval', () => {
  it('starts its runs waiting for approval, whatever its factory’s limits', async () => {
    const other = (await t.call('POST', '/factory', { name: 'Hooked' })).json().uid;
    await t.call('POST', '/agent/identities', { name: 'Hooked Foreman', agent_type: 'FOREMAN', factory_uid: other });
    const hook = (await t.call('POST', `/factory/${other}/webhooks`, { name: 'in', authMode: 'token' })).json();
    const automation = await t.call('POST', `/factory/${other}/automations`, {
      name: 'Careful automation',
      prompt: 'Handle it',
      requires_approval: true,
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
    });
    expect(automation.statusCode, automation.body).toBe(201);
    expect(automation.json().requires_approval).toBe(true);
    const delivered = await t.app.inject({
      method: 'POST',
      url: `/webhooks/w/${hook.uid}`,
      headers: { authorization: `Bearer ${hook.secret}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ hello: 'world' }),
    });
    expect(delivered.statusCode).toBe(202);
    const started = await eventually(async () => {
      const listed = (await t.call('GET', `/agent/runs?factory_uid=${other}`)).json().runs;
      return listed.length ? listed[0] : undefined;
    });
    expect(started).toMatchObject({ state: 'QUEUED', approval: { state: 'pending', rule: 'automation' } });
    await settleGuards(t);
  });
});

describe('a schedule that requires approval', () => {
  it('fires runs that wait for approval; its answer says so', async () => {
    clock.set('2026-03-05T09:00:30Z');
    const created = await t.call('POST', '/agent/schedules', {
      name: 'Careful nightly',
      prompt: 'Run it',
      cron_schedule: '* * * * *',
      requires_approval: true,
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().requires_approval).toBe(true);
    clock.set('2026-03-05T09:01:30Z');
    const run = await eventually(async () => {
      const listed = (await t.call('GET', '/agent/runs?source=SCHEDULED_AGENT')).json().runs;
      return listed.length ? listed[0] : undefined;
    });
    expect(run).toMatchObject({ state: 'QUEUED', approval: { state: 'pending', rule: 'schedule' } });
    await t.call('DELETE', `/agent/schedules/${created.json().id}`);
    await settleGuards(t);
  });
});

describe('limits', () => {
  it('are for admins to set and members to read; bad bodies are refused naming the field', async () => {
    await expectRefused(
      t,
      () => t.call('PUT', `/factory/${factory}/limits`, { max_concurrent_runs: 2 }, member.api_key),
      403,
    );
    expect((await t.call('GET', `/factory/${factory}/limits`, undefined, member.api_key)).json()).toEqual({
      max_concurrent_runs: null,
      requires_approval: true,
      approval_timeout_minutes: 60,
      stuck_after_minutes: null,
      max_run_minutes: null,
    });
    for (const [body, field] of [
      [{ max_concurrent_runs: 0 }, 'max_concurrent_runs'],
      [{ stuck_after_minutes: 1.5 }, 'stuck_after_minutes'],
      [{ requires_approval: 'yes' }, 'requires_approval'],
    ] as const) {
      const problem = await expectRefused(t, () => t.call('PUT', `/teams/${t.teamUid}/limits`, body), 400);
      expect(JSON.stringify(problem.errors)).toContain(field);
    }
  });
});
