import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchedTaskReactor } from '../../../commands/task/task-reactor.js';
import { runStream } from '../../../commands/run/events.js';
import { runsProjection } from '../../../projections/run/runs.js';
import type { RecordedEvent } from '../../../src/eventstore/port.js';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';
import { newRun, outsiderKey } from '../../helpers/conversation-fixtures.js';
import { eventually, newFactory } from '../../helpers/task-fixtures.js';

let t: TestApp;
let factory: string;
let foremanUid: string;
beforeAll(async () => {
  t = await startTestApp();
  factory = await newFactory(t, 'Payments');
  const foreman = await t.call('POST', '/agent/identities', {
    name: 'Pay Foreman',
    agent_type: 'FOREMAN',
    factory_uid: factory,
  });
  expect(foreman.statusCode, foreman.body).toBe(201);
  foremanUid = foreman.json().uid;
});
afterAll(() => t.close());

const dispatch = (body: unknown, factoryUid = factory, key?: string) =>
  t.call('POST', `/factory/${factoryUid}/runs`, body, key);

/** The task the reactor creates for a dispatched run, once it exists. */
const taskOf = (runId: string, factoryUid = factory) =>
  eventually(async () => {
    const res = await t.call('GET', `/factory/${factoryUid}/task-by-run?run_id=${runId}`);
    return res.statusCode === 200 ? (res.json() as { uid: string; title: string }) : undefined;
  });

const runCreatedEvent = async (runId: string) =>
  (await t.rt.events.readStream(runStream(runId), { maxCount: 1 }))[0] as RecordedEvent<never>;

describe('POST /factory/{uid}/runs', () => {
  it('creates a run for the foreman, stamped with the ticket, and its task asynchronously', async () => {
    const res = await dispatch({
      prompt: 'Card payments fail on Safari\nSee the logs.',
      title: 'Safari payments',
      ticket_ref: 'linear:PAY-123',
      ticket_url: 'https://linear.app/acme/issue/PAY-123',
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      factory_uid: factory,
      foreman_agent: 'Pay Foreman',
      run_id: expect.any(String),
      state: 'QUEUED',
      ticket_ref: 'linear:PAY-123',
      run_url: expect.stringMatching(new RegExp(`/api/v1/agent/runs/${body.run_id}$`)),
    });
    const run = (await t.rt.readModel(runsProjection).get(body.run_id))!;
    expect(run).toMatchObject({
      source: 'API',
      agent_identity_uid: foremanUid,
      factory_uid: factory,
      prompt: 'Card payments fail on Safari\nSee the logs.',
      title: 'Safari payments',
      team_uid: t.teamUid,
      metadata: { ticket_source: 'linear', ticket_id: 'PAY-123', ticket_url: 'https://linear.app/acme/issue/PAY-123' },
    });

    const task = await taskOf(body.run_id);
    expect(task).toMatchObject({
      factory_uid: factory,
      title: 'Safari payments',
      stage: 'TRIAGE',
      run_id: body.run_id,
      conversation_id: run.conversation_id,
      author: { type: 'user', uid: t.adminUid },
      current_run: { run_id: body.run_id, state: 'QUEUED' },
    });
    const listed = (await t.call('GET', `/factory/${factory}/tasks?full_list=true&q=safari`)).json().tasks;
    expect(listed).toEqual([expect.objectContaining({ uid: task.uid, ticket_source: 'linear', ticket_id: 'PAY-123' })]);
  });

  it('titles the task from the prompt and mints an adhoc ticket reference when none is given', async () => {
    const body = (await dispatch({ prompt: 'Upgrade the payment SDK\nto the newest version' })).json();
    expect(body.ticket_ref).toBe(`adhoc:${body.run_id}`);
    const run = (await t.rt.readModel(runsProjection).get(body.run_id))!;
    expect(run.metadata).toEqual({ ticket_source: 'adhoc', ticket_id: body.run_id });
    expect((await taskOf(body.run_id)).title).toBe('Upgrade the payment SDK');
  });

  it('creates the task once however often the reaction runs', async () => {
    const body = (await dispatch({ prompt: 'Once' })).json();
    const task = await taskOf(body.run_id);
    const before = await t.head();
    await dispatchedTaskReactor.on.RunCreated!(await runCreatedEvent(body.run_id), t.rt);
    expect(await t.head()).toBe(before);
    expect((await taskOf(body.run_id)).uid).toBe(task.uid);
  });

  it('creates no task for a run that was not dispatched', async () => {
    const plain = await newRun(t, { prompt: 'Just a run' });
    const before = await t.head();
    await dispatchedTaskReactor.on.RunCreated!(await runCreatedEvent(plain.run_id), t.rt);
    expect(await t.head()).toBe(before);
    expectProblem(await t.call('GET', `/factory/${factory}/task-by-run?run_id=${plain.run_id}`), 404);
  });

  it('lets the dispatched task be cancelled like any other', async () => {
    const body = (await dispatch({ prompt: 'Cancel me' })).json();
    const task = await taskOf(body.run_id);
    const res = await t.call('POST', `/factory/${factory}/tasks/${task.uid}/cancel`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ stage: 'CANCELLED', current_run: { run_id: body.run_id, state: 'CANCELLED' } });
  });

  it('refuses a factory without a foreman with 409, writing nothing', async () => {
    const bare = await newFactory(t);
    await expectRefused(t, () => dispatch({ prompt: 'x' }, bare), 409, 'no_foreman');
    // A foreman that was deleted, or linked to another factory, is no foreman.
    const gone = (
      await t.call('POST', '/agent/identities', { name: 'Gone', agent_type: 'FOREMAN', factory_uid: bare })
    ).json();
    expect((await t.call('DELETE', `/agent/identities/${gone.uid}`)).statusCode).toBe(204);
    await expectRefused(t, () => dispatch({ prompt: 'x' }, bare), 409, 'no_foreman');
    const moved = (
      await t.call('POST', '/agent/identities', { name: 'Moved', agent_type: 'FOREMAN', factory_uid: bare })
    ).json();
    expect((await t.call('PUT', `/agent/identities/${moved.uid}`, { factory_uid: factory })).statusCode).toBe(200);
    await expectRefused(t, () => dispatch({ prompt: 'x' }, bare), 409, 'no_foreman');
    const helper = (
      await t.call('POST', '/agent/identities', { name: 'Helper', agent_type: 'IMPLEMENT', factory_uid: bare })
    ).json();
    expect(helper.uid).toEqual(expect.any(String));
    await expectRefused(t, () => dispatch({ prompt: 'x' }, bare), 409, 'no_foreman');
    // Linking a foreman makes the factory dispatchable.
    expect(
      (await t.call('POST', '/agent/identities', { name: 'Bare Foreman', agent_type: 'FOREMAN', factory_uid: bare }))
        .statusCode,
    ).toBe(201);
    const dispatched = (await dispatch({ prompt: 'x' }, bare)).json();
    expect(dispatched.foreman_agent).toBe('Bare Foreman');
    await taskOf(dispatched.run_id, bare); // the reaction has written all it writes
  });

  it('refuses an invalid body or ticket_ref with 400, writing nothing', async () => {
    for (const body of [
      {},
      { prompt: '' },
      { prompt: '   ' },
      { prompt: 42 },
      { prompt: 'x', ticket_ref: 'PAY-123' },
      { prompt: 'x', ticket_ref: 'linear:' },
      { prompt: 'x', ticket_ref: ':PAY-1' },
      { prompt: 'x', ticket_ref: 'lin ear:PAY-1' },
      { prompt: 'x', ticket_ref: 'linear:PAY 1' },
      { prompt: 'x', ticket_ref: `linear:${'x'.repeat(260)}` },
      { prompt: 'x', ticket_url: 'not a url' },
      { prompt: 'x', ticket_url: `https://example.com/${'x'.repeat(260)}` },
      { prompt: 'x', title: '' },
      { prompt: 'x', title: 'x'.repeat(501) },
      { prompt: 'x', extra: true },
    ]) {
      await expectRefused(t, () => dispatch(body), 400, 'invalid_request');
    }
  });

  it('answers 404 for an unknown factory or one of another team', async () => {
    await expectRefused(t, () => dispatch({ prompt: 'x' }, 'nope'), 404);
    const outsider = await outsiderKey(t);
    await expectRefused(t, () => dispatch({ prompt: 'x' }, factory, outsider), 404);
  });
});
