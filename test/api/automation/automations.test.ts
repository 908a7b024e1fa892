import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TRIGGERS } from '../../../commands/automation/triggers.js';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
let factory: string;
let webhook: string;
beforeAll(async () => {
  t = await startTestApp();
  factory = (await t.call('POST', '/factory', { name: 'Payments' })).json().uid;
  webhook = (await t.call('POST', `/factory/${factory}/webhooks`, { name: 'Alerts' })).json().uid;
});
afterAll(() => t.close());

const onHook = (uid: string, payload?: unknown) => ({
  provider: 'webhook',
  event: 'received',
  filter: { webhook_ids: [uid], ...(payload ? { payload } : {}) },
});
const body = (fields: Record<string, unknown> = {}) => ({
  name: 'Triage alerts',
  prompt: 'Triage the alert.',
  triggers: [onHook(webhook)],
  ...fields,
});
const create = (b: unknown, f = factory, key?: string) => t.call('POST', `/factory/${f}/automations`, b, key);

async function strangerKey() {
  const team = (await t.call('POST', '/teams', { name: 'Other' })).json().uid as string;
  return (await t.addMember(team, { email: `s${uuidv4()}@example.com` })).api_key;
}

describe('automations: create, read, update, delete', () => {
  it('creates an automation (201) and reads it back in the list and alone', async () => {
    const res = await create(
      body({
        triggers: [
          onHook(webhook, { action: ['opened'] }),
          { provider: 'github', event: 'push', filter: { repos: ['acme/api'] } },
        ],
      }),
    );
    expect(res.statusCode, res.body).toBe(201);
    const a = res.json();
    expect(a).toEqual({
      id: expect.any(String),
      factory_uid: factory,
      name: 'Triage alerts',
      prompt: 'Triage the alert.',
      agent: null,
      enabled: true,
      requires_approval: false,
      triggers: [
        {
          provider: 'webhook',
          event: 'received',
          filter: { webhook_ids: [webhook], payload: { action: ['opened'] } },
          active: true,
        },
        { provider: 'github', event: 'push', filter: { repos: ['acme/api'] }, active: true },
      ],
      creator: { uid: t.adminUid },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await t.call('GET', `/factory/${factory}/automations/${a.id}`)).json()).toEqual(a);
    const list = (await t.call('GET', `/factory/${factory}/automations`)).json();
    expect(list.automations.map((x: { id: string }) => x.id)).toContain(a.id);
  });

  it('normalises webhook_ids given as {in: [uid]} and accepts several webhook triggers', async () => {
    const second = (await t.call('POST', `/factory/${factory}/webhooks`, { name: 'Second' })).json().uid;
    const res = await create(
      body({
        triggers: [
          { provider: 'webhook', event: 'received', filter: { webhook_ids: { in: [webhook] } } },
          onHook(second),
        ],
      }),
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().triggers.map((tr: { filter: { webhook_ids: string[] } }) => tr.filter.webhook_ids)).toEqual([
      [webhook],
      [second],
    ]);
  });

  it('updates only the given fields (200) and deletes (204, then 404)', async () => {
    const a = (await create(body())).json();
    const patched = await t.call('PATCH', `/factory/${factory}/automations/${a.id}`, {
      enabled: false,
      prompt: 'New prompt',
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ id: a.id, name: a.name, enabled: false, prompt: 'New prompt' });
    expect((await t.call('DELETE', `/factory/${factory}/automations/${a.id}`)).statusCode).toBe(204);
    expectProblem(await t.call('GET', `/factory/${factory}/automations/${a.id}`), 404, 'resource_not_found');
    await expectRefused(t, () => t.call('DELETE', `/factory/${factory}/automations/${a.id}`), 404);
  });

  it("keeps a deleted webhook's triggers visible, marked inactive, and keeps them through later edits", async () => {
    const doomed = (await t.call('POST', `/factory/${factory}/webhooks`, { name: 'Doomed' })).json().uid;
    const a = (await create(body({ triggers: [onHook(doomed), onHook(webhook)] }))).json();
    expect((await t.call('DELETE', `/factory/${factory}/webhooks/${doomed}`)).statusCode).toBe(204);
    const after = (await t.call('GET', `/factory/${factory}/automations/${a.id}`)).json();
    expect(after.triggers.map((tr: { active: boolean }) => tr.active)).toEqual([false, true]);
    const renamed = await t.call('PATCH', `/factory/${factory}/automations/${a.id}`, {
      name: 'Renamed',
      triggers: after.triggers.map(({ active: _a, ...tr }: { active: boolean }) => tr),
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json().triggers.map((tr: { active: boolean }) => tr.active)).toEqual([false, true]);
    // A new automation cannot name it.
    const refused = await expectRefused(t, () => create(body({ triggers: [onHook(doomed)] })), 400, 'invalid_request');
    expect(refused.errors).toEqual([
      { path: 'body.triggers.0.filter.webhook_ids.0', message: `no webhook ${doomed} in this factory` },
    ]);
  });

  it('sets a live agent of the team, and refuses an unknown one', async () => {
    const agent = (
      await t.call('POST', '/agent/identities', { name: 'Implementer', agent_type: 'IMPLEMENT', factory_uid: factory })
    ).json().uid;
    expect((await create(body({ agent }))).json().agent).toBe(agent);
    const refused = await expectRefused(t, () => create(body({ agent: 'no-such-agent' })), 400);
    expect(refused.errors).toEqual([{ path: 'body.agent', message: expect.any(String) }]);
  });
});

describe('automations: refusals write nothing', () => {
  it('refuses an invalid payload filter with the paths of every problem', async () => {
    const refused = await expectRefused(
      t,
      () =>
        create(
          body({
            triggers: [onHook(webhook, { action: [], pr: { state: { in: ['open'], regex: 'x' } }, n: [{ deep: 1 }] })],
          }),
        ),
      400,
      'invalid_request',
    );
    expect(refused.errors.map((e: { path: string }) => e.path)).toEqual([
      'body.triggers.0.filter.payload.action',
      'body.triggers.0.filter.payload.pr.state.regex',
      'body.triggers.0.filter.payload.n.0',
    ]);
  });

  it('refuses a webhook of another factory, and a trigger naming two webhooks', async () => {
    const other = (await t.call('POST', '/factory', { name: 'Other' })).json().uid;
    const foreign = (await t.call('POST', `/factory/${other}/webhooks`, { name: 'Foreign' })).json().uid;
    await expectRefused(t, () => create(body({ triggers: [onHook(foreign)] })), 400);
    const two = await expectRefused(
      t,
      () =>
        create(
          body({ triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [webhook, foreign] } }] }),
        ),
      400,
    );
    expect(two.errors[0].path).toBe('body.triggers.0.filter.webhook_ids');
  });

  it('refuses bad bodies and broken limits (400)', async () => {
    const hook = onHook(webhook);
    await expectRefused(t, () => create(body({ triggers: [] })), 400);
    await expectRefused(t, () => create(body({ triggers: Array.from({ length: MAX_TRIGGERS + 1 }, () => hook) })), 400);
    await expectRefused(t, () => create(body({ prompt: '   ' })), 400);
    await expectRefused(t, () => create(body({ prompt: 'x'.repeat(100_001) })), 400);
    await expectRefused(t, () => create(body({ name: 'x'.repeat(201) })), 400);
    await expectRefused(t, () => create(body({ unknown: 1 })), 400);
    await expectRefused(
      t,
      () => create(body({ triggers: [{ provider: 'webhook', event: 'sent', filter: { webhook_ids: [webhook] } }] })),
      400,
    );
    // Each limit at its edge is accepted.
    expect(
      (
        await create(
          body({
            prompt: 'x'.repeat(100_000),
            name: 'n'.repeat(200),
            triggers: Array.from({ length: MAX_TRIGGERS }, () => hook),
          }),
        )
      ).statusCode,
    ).toBe(201);
  });

  it('refuses an empty patch, a patch with invalid triggers, and unknown automations', async () => {
    const a = (await create(body())).json();
    await expectRefused(t, () => t.call('PATCH', `/factory/${factory}/automations/${a.id}`, {}), 400);
    await expectRefused(
      t,
      () =>
        t.call('PATCH', `/factory/${factory}/automations/${a.id}`, {
          triggers: [onHook(webhook, { a: { exists: 'yes' } })],
        }),
      400,
    );
    await expectRefused(t, () => t.call('PATCH', `/factory/${factory}/automations/nope`, { name: 'x' }), 404);
  });

  it("hides the automations of another team's factory (404) and of another factory (404)", async () => {
    const a = (await create(body())).json();
    const stranger = await strangerKey();
    await expectRefused(t, () => create(body(), factory, stranger), 404);
    expectProblem(await t.call('GET', `/factory/${factory}/automations`, undefined, stranger), 404);
    expectProblem(await t.call('GET', `/factory/${factory}/automations/${a.id}`, undefined, stranger), 404);
    await expectRefused(t, () => t.call('DELETE', `/factory/${factory}/automations/${a.id}`, undefined, stranger), 404);
    const other = (await t.call('POST', '/factory', { name: 'Elsewhere' })).json().uid;
    expectProblem(await t.call('GET', `/factory/${other}/automations/${a.id}`), 404);
    await expectRefused(t, () => t.call('PATCH', `/factory/${other}/automations/${a.id}`, { name: 'x' }), 404);
  });
});
