/**
 * What budgets, limits and approvals tell the event streams (issues #32, #33), through the real app
 * on real SQLite files: each decision's event, mapped by the type its feature registered, gives the
 * documented payload (its schema takes it strictly), readable by the scope's team only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START } from '../../../src/eventstore/port.js';
import type { Principal } from '../../../src/http/principal.js';
import { streamsOf } from '../../../src/streams/live-streams.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
let factory: string;
beforeAll(async () => {
  t = await startTestApp();
  factory = (await t.call('POST', '/factory', { name: 'Streamed' })).json().uid;
  await t.call('POST', '/agent/identities', { name: 'Streamed Foreman', agent_type: 'FOREMAN', factory_uid: factory });
});
afterAll(() => t.close());

const someone = (teams: Array<[string, 'admin' | 'member']>): Principal => ({
  type: 'user',
  uid: 'someone-else',
  teams: new Map(teams),
});

/** The items the streams send for the last event of `type` in the log. */
async function sentFor(type: string) {
  const events = await t.rt.events.readAll(START, 10_000, [type]);
  const hub = streamsOf(t.rt).hub;
  const sent = await hub.map(events.at(-1)!);
  for (const { item } of sent) expect(() => hub.types.get(item.type)!.schema.strict().parse(item.data)).not.toThrow();
  return sent.map((s) => s.item);
}

function expectTeamOnly(item: { readable: (v: { principal: Principal; team: string | null }) => boolean }) {
  expect(item.readable({ principal: someone([[t.teamUid, 'member']]), team: t.teamUid })).toBe(true);
  expect(item.readable({ principal: someone([[t.teamUid, 'member']]), team: null })).toBe(true);
  expect(item.readable({ principal: someone([['another-team', 'admin']]), team: 'another-team' })).toBe(false);
}

describe('guardrail stream types', () => {
  it('budget.changed: a budget set, then removed', async () => {
    const put = await t.call('PUT', `/factory/${factory}/budget`, { monthly_usd: 300, per_run_usd: 5 });
    expect(put.statusCode, put.body).toBe(200);
    const [set] = await sentFor('BudgetSet');
    expect(set).toMatchObject({
      type: 'budget.changed',
      data: {
        scope: { kind: 'factory', team_uid: t.teamUid, factory_uid: factory },
        budget: { monthly_usd: 300, per_run_usd: 5, notify_at: [0.5, 0.8, 1] },
      },
    });
    expectTeamOnly(set!);
    expect((await t.call('DELETE', `/factory/${factory}/budget`)).statusCode).toBe(204);
    const [removed] = await sentFor('BudgetRemoved');
    expect(removed!.data).toEqual({
      scope: { kind: 'factory', team_uid: t.teamUid, factory_uid: factory },
      budget: null,
    });
  });

  it('limits.changed and run.approval_requested: a factory that asks for approval, and a run that waits', async () => {
    const put = await t.call('PUT', `/factory/${factory}/limits`, { requires_approval: true, max_concurrent_runs: 3 });
    expect(put.statusCode, put.body).toBe(200);
    const [limits] = await sentFor('LimitsSet');
    expect(limits).toMatchObject({
      type: 'limits.changed',
      data: {
        scope: { kind: 'factory', factory_uid: factory },
        limits: { requires_approval: true, max_concurrent_runs: 3 },
      },
    });
    expectTeamOnly(limits!);

    const run = await t.call('POST', `/factory/${factory}/runs`, { prompt: 'Wait for me' });
    expect(run.statusCode, run.body).toBe(201);
    const [asked] = await sentFor('RunApprovalRequested');
    expect(asked).toMatchObject({
      type: 'run.approval_requested',
      data: { run_id: run.json().run_id, factory_uid: factory, rule: 'factory' },
    });
    expectTeamOnly(asked!);
    expect((await t.call('POST', `/agent/runs/${run.json().run_id}/approve`)).statusCode).toBe(200);
    const [approved] = await sentFor('RunApproved');
    expect(approved).toMatchObject({ type: 'run.approved', data: { run_id: run.json().run_id, by: { type: 'user' } } });
  });
});
