/**
 * The factory inbox through the real app: each kind of notification raised by the inbox reactor
 * from what runs and tasks do, and cleared when no longer relevant; both scopes; read and unread
 * outcomes (another team's notification, one the caller does not receive, a cleared one, a
 * missing one); notification routes; and a question reported through the worker protocol.
 */
import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Artifact } from '../../../commands/run/events.js';
import { expectProblem, expectRefused, startTestApp, type TestApp } from '../../helpers/app.js';
import {
  addArtifact,
  finishRun,
  type Held,
  newRun,
  outsiderKey,
  runCommand,
  startRun,
} from '../../helpers/conversation-fixtures.js';
import { eventually, newFactory, newMember } from '../../helpers/task-fixtures.js';

let t: TestApp;
let factory: string;
beforeAll(async () => {
  t = await startTestApp();
  factory = await newFactory(t, 'Inbox factory');
});
afterAll(() => t.close());

type Item = {
  notification_uid: string;
  kind: string;
  factory_task_uid: string;
  title: string;
  stage: string;
  urls: string[];
  is_read?: boolean;
  recipients: Array<{ uid: string; email?: string }>;
  questions?: Array<{ id: string; question: string; options: string[] }>;
  run_id?: string;
};

const inbox = async (query = '', key?: string): Promise<Item[]> => {
  const res = await t.call('GET', `/factory-inbox${query}`, undefined, key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().notifications;
};

/** The task's notifications in the admin's inbox once `ready` holds for them (the reactor is asynchronous). */
const settle = (task: string, ready: (items: Item[]) => boolean) =>
  eventually(async () => {
    const items = (await inbox('?limit=100')).filter((i) => i.factory_task_uid === task);
    return ready(items) ? items : undefined;
  });

/** A task on a fresh run of the admin's, its run started by a worker. */
async function newTask(stage = 'IMPLEMENT') {
  const run = await newRun(t, { title: 'Payments bug' });
  const res = await t.call('POST', `/factory/${factory}/tasks`, {
    title: `Task ${uuidv4().slice(0, 8)}`,
    conversation_id: run.conversation_id,
    stage,
  });
  expect(res.statusCode, res.body).toBe(201);
  const held = await startRun(t, run.run_id);
  return { task: res.json().uid as string, run: run.run_id, held };
}

const setStage = async (task: string, stage: string) => {
  const res = await t.call('PATCH', `/factory/${factory}/tasks/${task}`, { stage });
  expect(res.statusCode, res.body).toBe(200);
};

const pr = (url: string, status?: string): Artifact => ({
  artifact_uid: uuidv4(),
  artifact_type: 'PULL_REQUEST',
  public: false,
  url,
  branch: 'fix',
  ...(status ? { status } : {}),
});

const ask = (run: string, held: Held, question: string, options: string[] = []) =>
  runCommand(t, run, {
    type: 'AskQuestion',
    data: {
      run_id: run,
      ...held,
      ask_id: uuidv4(),
      questions: [{ id: 'q1', question, options, type: 'single_select' }],
    },
  });

const followUp = async (run: string, message = 'Use Postgres') => {
  const res = await t.call('POST', `/agent/runs/${run}/followups`, { message });
  expect(res.statusCode, res.body).toBe(200);
};

const mark = (action: 'read' | 'unread', uids: unknown, key?: string) =>
  t.call('POST', `/factory-inbox/notifications/${action}`, { notification_uids: uids }, key);

describe('notifications raised and cleared by the inbox reactor', () => {
  it('spec_review: a task in SPEC with a plan, cleared when the task moves on', async () => {
    const { task, run, held } = await newTask('TRIAGE');
    await addArtifact(t, run, held, {
      artifact_uid: uuidv4(),
      artifact_type: 'PLAN',
      public: false,
      title: 'Retry card payments',
      content: '# Plan',
    });
    await setStage(task, 'SPEC');
    const [item] = await settle(task, (i) => i.length === 1);
    expect(item).toMatchObject({
      kind: 'spec_review',
      stage: 'SPEC',
      run_id: run,
      is_read: false,
      recipients: [{ uid: t.adminUid, email: 'admin@example.com' }],
    });
    await setStage(task, 'IMPLEMENT');
    await settle(task, (i) => i.length === 0);
  });

  it('pr_review: a task in REVIEW with a PR, cleared when the PR is merged', async () => {
    const { task, run, held } = await newTask('IMPLEMENT');
    await addArtifact(t, run, held, pr('https://github.com/acme/pay/pull/7'));
    await setStage(task, 'REVIEW');
    const [item] = await settle(task, (i) => i.length === 1);
    expect(item).toMatchObject({
      kind: 'pr_review',
      urls: ['https://github.com/acme/pay/pull/7'],
      url: 'https://github.com/acme/pay/pull/7',
    });
    await addArtifact(t, run, held, pr('https://github.com/acme/pay/pull/7', 'MERGED'));
    await settle(task, (i) => i.length === 0);
  });

  it('pr_review is cleared when the PR is closed, and a REVIEW without an open PR raises nothing', async () => {
    const { task, run, held } = await newTask('REVIEW');
    await addArtifact(t, run, held, pr('https://github.com/acme/pay/pull/8'));
    await settle(task, (i) => i.length === 1 && i[0]!.kind === 'pr_review');
    await addArtifact(t, run, held, pr('https://github.com/acme/pay/pull/8', 'closed'));
    await settle(task, (i) => i.length === 0);
  });

  it('question: a run asks, and a follow-up answers it', async () => {
    const { task, run, held } = await newTask();
    await ask(run, held, 'Which database?', ['sqlite', 'postgres']);
    const [item] = await settle(task, (i) => i.length === 1);
    expect(item).toMatchObject({
      kind: 'question',
      title: 'Which database?',
      run_id: run,
      questions: [{ id: 'q1', question: 'Which database?', options: ['sqlite', 'postgres'], type: 'single_select' }],
    });
    await followUp(run);
    await settle(task, (i) => i.length === 0);
  });

  it('blocked: the current run ends BLOCKED, cleared when a follow-up resumes it', async () => {
    const { task, run, held } = await newTask();
    await finishRun(t, run, held, 'BLOCKED', 'Waiting for approval of the migration');
    const [item] = await settle(task, (i) => i.length === 1);
    expect(item).toMatchObject({ kind: 'blocked', run_id: run, description: 'Waiting for approval of the migration' });
    await followUp(run, 'Approved');
    await settle(task, (i) => i.length === 0);
  });

  it('blocked only when nothing else needs the person: an open question takes its place', async () => {
    const { task, run, held } = await newTask();
    await ask(run, held, 'May I drop the legacy table?');
    await finishRun(t, run, held, 'BLOCKED', 'Waiting for an answer');
    const items = await settle(task, (i) => i.length === 1);
    expect(items.map((i) => i.kind)).toEqual(['question']);
    // Answered: the question is cleared, and the run resumes (no longer BLOCKED): nothing is left.
    await followUp(run, 'Yes');
    await settle(task, (i) => i.length === 0);
  });

  it('failed: the current run ends FAILED, cleared when the task completes', async () => {
    const { task, run, held } = await newTask();
    await finishRun(t, run, held, 'FAILED', 'Tests fail');
    const [item] = await settle(task, (i) => i.length === 1);
    expect(item).toMatchObject({ kind: 'failed', description: 'Tests fail' });
    await setStage(task, 'COMPLETE');
    await settle(task, (i) => i.length === 0);
  });

  it('everything on a task is cleared when it is deleted', async () => {
    const { task, run, held } = await newTask();
    await finishRun(t, run, held, 'FAILED', 'Boom');
    await settle(task, (i) => i.length === 1);
    expect((await t.call('DELETE', `/factory/${factory}/tasks/${task}`)).statusCode).toBe(204);
    await settle(task, (i) => i.length === 0);
  });
});

describe('GET /factory-inbox', () => {
  let member: Awaited<ReturnType<typeof newMember>>;
  let agentKey: string;
  let task: string;
  let uid: string;
  beforeAll(async () => {
    member = await newMember(t);
    const agent = await t.call('POST', '/agent/identities', { name: 'Inbox reader' });
    agentKey = (await t.call('POST', `/agent/identities/${agent.json().uid}/api-keys`)).json().api_key;
    const made = await newTask();
    task = made.task;
    await finishRun(t, made.run, made.held, 'FAILED', 'Red');
    uid = (await settle(task, (i) => i.length === 1))[0]!.notification_uid;
  });

  it('mine: the caller’s own notifications with is_read; nothing for a teammate who receives none', async () => {
    const mine = (await inbox('?scope=mine&limit=100')).find((i) => i.notification_uid === uid);
    expect(mine).toMatchObject({ is_read: false, factory_uid: factory });
    expect((await inbox('', member.key)).find((i) => i.notification_uid === uid)).toBeUndefined();
    // recipient_uid in mine scope matches only the caller.
    expect(await inbox(`?recipient_uid=${member.uid}`)).toEqual([]);
  });

  it('team: every live recipient’s, for users and agents, never with is_read', async () => {
    for (const key of [member.key, agentKey]) {
      const items = await inbox(`?scope=team&factory_uid=${factory}&limit=100`, key);
      const item = items.find((i) => i.notification_uid === uid)!;
      expect(item.recipients).toEqual([{ uid: t.adminUid, email: 'admin@example.com' }]);
      expect(item).not.toHaveProperty('is_read');
    }
    const byRecipient = await inbox(`?scope=team&recipient_uid=${t.adminUid}&limit=100`, member.key);
    expect(byRecipient.some((i) => i.notification_uid === uid)).toBe(true);
    expect(byRecipient.every((i) => !('is_read' in i))).toBe(true);
    expect(await inbox(`?scope=team&recipient_uid=${member.uid}`, member.key)).toEqual([]);
    // Another team's factory matches nothing.
    expect(await inbox(`?scope=team&factory_uid=${uuidv4()}`, member.key)).toEqual([]);
  });

  it('pages newest first by keyset', async () => {
    const other = await newTask();
    await finishRun(t, other.run, other.held, 'FAILED', 'Also red');
    await settle(other.task, (i) => i.length === 1);
    const all = await inbox('?scope=team&limit=100');
    expect(all.length).toBeGreaterThanOrEqual(2);
    const first = await t.call('GET', '/factory-inbox?scope=team&limit=1');
    const page = first.json();
    expect(page.notifications).toEqual([all[0]]);
    expect(page.page_info.has_next_page).toBe(true);
    const next = await t.call('GET', `/factory-inbox?scope=team&limit=1&cursor=${page.page_info.next_cursor}`);
    expect(next.json().notifications).toEqual([all[1]]);
  });

  it('refuses a bad scope, limit or cursor, and the mine scope for an agent, with 400', async () => {
    expectProblem(await t.call('GET', '/factory-inbox?scope=everyone'), 400);
    expectProblem(await t.call('GET', '/factory-inbox?limit=0'), 400);
    expectProblem(await t.call('GET', '/factory-inbox?limit=101'), 400);
    expectProblem(await t.call('GET', '/factory-inbox?cursor=nonsense'), 400, 'invalid_cursor');
    expectProblem(await t.call('GET', '/factory-inbox?colour=red'), 400);
    expectProblem(await t.call('GET', '/factory-inbox', undefined, agentKey), 400);
    expectProblem(await t.call('GET', '/factory-inbox', undefined, null), 401);
  });

  it('read and unread: outcomes in request order, per notification', async () => {
    const outsider = await outsiderKey(t);
    const missing = uuidv4();
    const read = await mark('read', [missing, uid, uid]);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json().outcomes).toEqual([
      { notification_uid: missing, ok: true },
      { notification_uid: uid, ok: true },
      { notification_uid: uid, ok: true },
    ]);
    expect((await inbox('?limit=100')).find((i) => i.notification_uid === uid)!.is_read).toBe(true);
    // A teammate who does not receive it, and a member of another team only: unsuccessful, not errors.
    expect((await mark('read', [uid], member.key)).json().outcomes).toEqual([
      { notification_uid: uid, ok: false, reason: 'not_recipient' },
    ]);
    expect((await mark('unread', [uid, missing], outsider)).json().outcomes).toEqual([
      { notification_uid: uid, ok: false, reason: 'not_accessible' },
      { notification_uid: missing, ok: true },
    ]);
    expect((await inbox('?limit=100')).find((i) => i.notification_uid === uid)!.is_read).toBe(true);
    expect((await mark('unread', [uid])).json().outcomes).toEqual([{ notification_uid: uid, ok: true }]);
    expect((await inbox('?limit=100')).find((i) => i.notification_uid === uid)!.is_read).toBe(false);
  });

  it('a cleared notification is no longer active: unsuccessful', async () => {
    await setStage(task, 'COMPLETE');
    await settle(task, (i) => i.length === 0);
    expect((await mark('read', [uid])).json().outcomes).toEqual([
      { notification_uid: uid, ok: false, reason: 'not_active' },
    ]);
  });

  it('refuses agents (403) and invalid lists (400), writing nothing', async () => {
    await expectRefused(t, () => mark('read', [uid], agentKey), 403);
    await expectRefused(t, () => mark('read', []), 400);
    await expectRefused(t, () => mark('unread', 'x'), 400);
    await expectRefused(
      t,
      () =>
        mark(
          'read',
          Array.from({ length: 101 }, () => uuidv4()),
        ),
      400,
    );
    await expectRefused(t, () => mark('read', ['']), 400);
  });
});

describe('notification routes', () => {
  it('sends the kinds a factory routes to its members as well; strangers are refused', async () => {
    const reviewer = await newMember(t);
    const put = await t.call('PUT', `/factory/${factory}/inbox-routes`, {
      routes: [{ kinds: ['pr_review'], recipient_uids: [reviewer.uid] }],
    });
    expect(put.statusCode, put.body).toBe(200);
    expect((await t.call('GET', `/factory/${factory}/inbox-routes`)).json()).toEqual({
      factory_uid: factory,
      routes: [{ kinds: ['pr_review'], recipient_uids: [reviewer.uid] }],
    });
    const { task, run, held } = await newTask('REVIEW');
    await addArtifact(t, run, held, pr('https://github.com/acme/pay/pull/9'));
    const [item] = await settle(task, (i) => i.length === 1);
    expect(item!.recipients.map((r) => r.uid)).toEqual([t.adminUid, reviewer.uid]);
    const theirs = await eventually(async () =>
      (await inbox('', reviewer.key)).find((i) => i.factory_task_uid === task),
    );
    expect(theirs).toMatchObject({ kind: 'pr_review', is_read: false });
    // Failures are not routed to the reviewer.
    await finishRun(t, run, held, 'FAILED', 'x');
    await setStage(task, 'IMPLEMENT');
    const [failed] = await settle(task, (i) => i.length === 1 && i[0]!.kind === 'failed');
    expect(failed!.recipients.map((r) => r.uid)).toEqual([t.adminUid]);

    const outsider = (await t.call('POST', '/teams', { name: 'Elsewhere' })).json();
    await expectRefused(
      t,
      () => t.call('PUT', `/factory/${factory}/inbox-routes`, { routes: [{ recipient_uids: [outsider.uid] }] }),
      400,
    );
    await expectRefused(
      t,
      () =>
        t.call('PUT', `/factory/${factory}/inbox-routes`, { routes: [{ kinds: ['gossip'], recipient_uids: ['u'] }] }),
      400,
    );
  });
});

describe('a question through the worker protocol', () => {
  it('POST /agent/workers/{worker_id}/runs/{run_id}/questions raises a question', async () => {
    const agent = await t.call('POST', '/agent/identities', { name: 'Asker' });
    const key = (await t.call('POST', `/agent/identities/${agent.json().uid}/api-keys`)).json().api_key;
    const worker = (await t.call('POST', '/agent/workers', { host: 'w' }, key)).json().worker_id;
    const { task, run } = await (async () => {
      const r = await newRun(t, { title: 'Asks' });
      const res = await t.call('POST', `/factory/${factory}/tasks`, {
        title: 'Asks',
        conversation_id: r.conversation_id,
      });
      return { task: res.json().uid as string, run: r.run_id };
    })();
    let held: { execution_id: string } | null = null;
    for (let i = 0; i < 50 && !held; i++) {
      const claimed = (await t.call('POST', `/agent/workers/${worker}/claim`, undefined, key)).json().run;
      if (claimed?.run_id === run) held = claimed;
    }
    const headers = { 'x-execution-id': held!.execution_id };
    const at = (what: string) => `/agent/workers/${worker}/runs/${run}/${what}`;
    expect((await t.call('POST', at('claim'), undefined, key, headers)).statusCode).toBe(200);
    expect((await t.call('POST', at('start'), undefined, key, headers)).statusCode).toBe(200);
    const asked = await t.call(
      'POST',
      at('questions'),
      { ask_id: 'a-1', questions: [{ question: 'Ship it?', options: ['yes', 'no'], recommended_option_index: 0 }] },
      key,
      headers,
    );
    expect(asked.statusCode, asked.body).toBe(201);
    expect(asked.json()).toEqual({
      run_id: run,
      ask_id: 'a-1',
      questions: [
        { id: 'q1', question: 'Ship it?', options: ['yes', 'no'], type: 'single_select', recommended_option_index: 0 },
      ],
    });
    const [item] = await settle(task, (i) => i.length === 1);
    expect(item).toMatchObject({ kind: 'question', title: 'Ship it?' });
    await expectRefused(t, () => t.call('POST', at('questions'), { questions: [] }, key, headers), 400);
    await expectRefused(
      t,
      () =>
        t.call('POST', at('questions'), { questions: [{ question: 'x', recommended_option_index: 2 }] }, key, headers),
      400,
    );
    await expectRefused(
      t,
      () => t.call('POST', at('questions'), { questions: [{ question: 'x' }] }, key, { 'x-execution-id': 'other' }),
      409,
    );
  });
});
