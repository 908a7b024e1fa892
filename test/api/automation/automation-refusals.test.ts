/**
 * An automation's run start that is refused (issue #33: a budget with no room) is recorded once
 * (`AutomationRunRefused`) and shown on the delivery's entry in the webhook's delivery log; no run
 * is created, a replayed reaction starts none later, and the read models verify clean.
 */
import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAutomationRuns } from '../../../commands/automation/automation-runs-reactor.js';
import { type AutomationRunRefused, automationRefusalStream } from '../../../commands/automation/events.js';
import type { DeliveryAccepted } from '../../../commands/webhook/events.js';
import { type RecordedEvent, START } from '../../../src/eventstore/port.js';
import { runCli } from '../../e2e/server-process.js';
import { fireDueSchedules } from '../../../commands/schedule/scheduler.js';
import { manualClock } from '../../../src/clock.js';
import { quiet, startTestApp, type TestApp } from '../../helpers/app.js';
import { settleGuards } from '../../helpers/guardrail-fixtures.js';

const clock = manualClock('2026-07-01T00:00:00Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, clock);
});
afterAll(() => t.close());

const settled = () => settleGuards(t, ['automation-runs', 'guardrails']);

async function setup() {
  const factory = (await t.call('POST', '/factory', { name: `F ${uuidv4()}` })).json().uid as string;
  await t.call('POST', '/agent/identities', { name: 'Foreman', agent_type: 'FOREMAN', factory_uid: factory });
  const hook = (await t.call('POST', `/factory/${factory}/webhooks`, { name: 'Alerts' })).json();
  const automation = await t.call('POST', `/factory/${factory}/automations`, {
    name: 'Triage',
    prompt: 'Triage the alert.',
    triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
  });
  expect(automation.statusCode, automation.body).toBe(201);
  // The estimate of a run is at least $1: a month of $0.001 has no room for one.
  const budget = await t.call('PUT', `/factory/${factory}/budget`, { monthly_usd: 0.001 });
  expect(budget.statusCode, budget.body).toBe(200);
  return { factory, hook: hook as { uid: string; secret: string }, automationId: automation.json().id as string };
}

async function deliver(hook: { uid: string; secret: string }, body: unknown): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/webhooks/w/${hook.uid}`,
    payload: JSON.stringify(body),
    headers: { authorization: `Bearer ${hook.secret}`, 'content-type': 'application/json' },
  });
  expect(res.statusCode, res.body).toBe(202);
  await settled();
  return res.json().delivery_id as string;
}

async function logEntry(factory: string, hookUid: string, deliveryId: string) {
  const res = await t.call('GET', `/factory/${factory}/webhooks/${hookUid}/deliveries?limit=100`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().deliveries as Array<Record<string, unknown>>).find((d) => d.delivery_id === deliveryId)!;
}

const runsOf = async (factory: string, deliveryId: string) =>
  (await t.call('GET', `/agent/runs?factory_uid=${factory}&metadata[delivery_id]=${deliveryId}`)).json()
    .runs as unknown[];

const acceptedEvent = async (deliveryId: string) =>
  (await t.rt.events.readAll(START, 100_000)).find(
    (e) => e.type === 'DeliveryAccepted' && (e.data as DeliveryAccepted['data']).delivery_id === deliveryId,
  ) as RecordedEvent<DeliveryAccepted>;

const refusalEvents = async () =>
  (await t.rt.events.readAll(START, 100_000)).filter(
    (e) => e.type === 'AutomationRunRefused',
  ) as RecordedEvent<AutomationRunRefused>[];

describe("an automation's refused run start", () => {
  it('names the refusal on the delivery log entry, creates no run, and is recorded once', async () => {
    const { factory, hook, automationId } = await setup();
    const deliveryId = await deliver(hook, { alert: 'disk full' });

    expect(await runsOf(factory, deliveryId)).toEqual([]);
    const entry = await logEntry(factory, hook.uid, deliveryId);
    expect(entry).toMatchObject({ delivery_id: deliveryId, status: 'accepted' });
    expect(entry.refused_runs).toEqual([
      {
        automation_id: automationId,
        automation_name: 'Triage',
        replay_id: null,
        status: 402,
        code: 'budget_exceeded',
        detail: expect.stringContaining('budget'),
        refused_at: expect.any(String),
      },
    ]);
    const [refusal] = (await refusalEvents()).filter(
      (e) => 'delivery' in e.data && e.data.delivery.delivery_id === deliveryId,
    );
    expect(refusal!.metadata.reaction).toMatchObject({ reactor: 'automation-runs' });

    // With room now, the same reaction again (a replay of the log) neither starts the run nor records twice.
    expect((await t.call('DELETE', `/factory/${factory}/budget`)).statusCode).toBe(204);
    expect(await startAutomationRuns(t.rt, await acceptedEvent(deliveryId))).toEqual([]);
    await settled();
    expect(await runsOf(factory, deliveryId)).toEqual([]);
    expect(await t.rt.events.readStream(automationRefusalStream(refusal!.data.run_id))).toHaveLength(1);
    expect((await logEntry(factory, hook.uid, deliveryId)).refused_runs).toHaveLength(1);
  });

  it("shows a replay's refusal beside the delivery's, and a delivery that starts its run shows none", async () => {
    const { factory, hook } = await setup();
    const deliveryId = await deliver(hook, { alert: 'cpu' });
    const replay = await t.call('POST', `/factory/${factory}/webhooks/${hook.uid}/deliveries/${deliveryId}/replay`);
    expect(replay.statusCode, replay.body).toBe(201);
    expect(replay.json().runs).toEqual([]);
    await settled();
    const refused = (await logEntry(factory, hook.uid, deliveryId)).refused_runs as Array<{ replay_id: string | null }>;
    expect(refused.map((r) => r.replay_id)).toEqual([null, replay.json().replay_id]);

    expect((await t.call('DELETE', `/factory/${factory}/budget`)).statusCode).toBe(204);
    const started = await deliver(hook, { alert: 'memory' });
    expect(await runsOf(factory, started)).toHaveLength(1);
    expect(await logEntry(factory, hook.uid, started)).not.toHaveProperty('refused_runs');
  });

  it("records a scheduled automation's refusal as well, with its firing", async () => {
    const { factory } = await setup();
    const created = await t.call('POST', `/factory/${factory}/automations`, {
      name: 'Nightly',
      prompt: 'Sweep.',
      triggers: [{ provider: 'schedule', event: 'cron_fired', schedule: { name: 'nightly', cron: '0 2 * * *' } }],
    });
    expect(created.statusCode, created.body).toBe(201);
    await quiet(t); // the inline schedule is created in the background
    clock.set('2026-07-01T02:00:10Z');
    await fireDueSchedules(t.rt);
    await quiet(t);
    const refusals = (await refusalEvents()).filter((e) => e.data.automation_id === created.json().id);
    expect(refusals.map((e) => e.data)).toEqual([
      expect.objectContaining({
        schedule: { schedule_id: expect.any(String), due_at: '2026-07-01T02:00:00.000Z' },
        code: 'budget_exceeded',
      }),
    ]);
    expect((await t.call('GET', `/agent/runs?factory_uid=${factory}`)).json().runs).toEqual([]);
  });

  it('the OpenAPI document describes the extension field, and the read models verify clean', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const text = JSON.stringify(doc.paths['/api/v1/factory/{factory_uid}/webhooks/{webhook_uid}/deliveries']);
    expect(text).toContain('refused_runs');
    expect(text).toContain('budget_exceeded');
    const verified = await runCli(['projections', 'verify'], { dataDir: t.dir });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  }, 120_000);
});
