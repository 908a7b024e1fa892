import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { v4 as uuidv4 } from 'uuid';
import { conversationDecider } from '../../../commands/conversation/conversation-decider.js';
import { conversationStream } from '../../../commands/conversation/events.js';
import { taskDecider } from '../../../commands/task/task-decider.js';
import { taskStream } from '../../../commands/task/events.js';
import { expectProblem, startTestApp, type TestApp } from '../../helpers/app.js';
import {
  adminContext,
  finishRun,
  newRun,
  outsiderKey,
  say,
  startRun,
  teammateKey,
} from '../../helpers/conversation-fixtures.js';
import { runCli } from '../../e2e/server-process.js';
import { history } from '../../../queries/task/history-cli.js';

let t: TestApp;
let outsider: string;
let teammate: string;
let run: { run_id: string; conversation_id: string };
let factoryUid: string;
let taskUid: string;

/** A task bound to `conversation_id`, as task creation records it. */
async function newTask(conversation_id: string, run_id: string) {
  const uid = uuidv4();
  const ctx = adminContext(t);
  await t.rt.execute(
    conversationStream(conversation_id),
    conversationDecider,
    {
      type: 'BindTask',
      data: { conversation_id, task_uid: uid, factory_uid: factoryUid, factory_team_uid: t.teamUid },
    },
    ctx,
  );
  await t.rt.execute(
    taskStream(uid),
    taskDecider,
    {
      type: 'CreateTask',
      data: {
        uid,
        factory_uid: factoryUid,
        team_uid: t.teamUid,
        conversation_id,
        run_id,
        title: 'Fix it',
        description: null,
        stage: 'TRIAGE',
      },
    },
    ctx,
  );
  return uid;
}

beforeAll(async () => {
  t = await startTestApp();
  outsider = await outsiderKey(t);
  teammate = await teammateKey(t);
  factoryUid = (await t.call('POST', '/factory', { name: 'Audit' })).json().uid;
  run = await newRun(t, { prompt: 'Audit me' });
  await t.call('POST', `/agent/conversations/${run.conversation_id}/followups`, { message: 'more' }, undefined, {
    'x-correlation-id': 'audit-corr-1',
  });
  const held = await startRun(t, run.run_id);
  await say(t, run.run_id, held, { text: 'working' });
  await finishRun(t, run.run_id, held);
  taskUid = await newTask(run.conversation_id, run.run_id);
});
afterAll(() => t.close());

describe('GET /agent/runs/{runId}/history', () => {
  it('lists the run’s events oldest first, with position, revision, time, actor, correlation and data', async () => {
    const res = await t.call('GET', `/agent/runs/${run.run_id}/history`);
    expect(res.statusCode, res.body).toBe(200);
    const { entries, page_info } = res.json();
    expect(page_info).toEqual({ has_next_page: false, next_cursor: null });
    expect(entries.map((e: { type: string }) => e.type)).toEqual([
      'RunCreated',
      'RunPromptExtended',
      'RunLeased',
      'RunClaimed',
      'RunStarted',
      'RunMessageRecorded',
      'RunFinished',
    ]);
    expect(entries.map((e: { revision: number }) => e.revision)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const positions = entries.map((e: { position: string }) => BigInt(e.position));
    expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions);
    expect(entries[1]).toEqual({
      id: expect.any(String),
      position: expect.stringMatching(/^\d+$/),
      stream: `run-${run.run_id}`,
      revision: 1,
      type: 'RunPromptExtended',
      occurred_at: expect.any(String),
      actor: { type: 'user', uid: t.adminUid },
      correlation_id: 'audit-corr-1',
      causation_id: null,
      request_id: expect.any(String),
      data: { run_id: run.run_id, message: 'more', mode: null },
    });
    expect(entries[2].actor).toEqual({ type: 'system', uid: 'test' });
  });

  it('pages with a cursor bound to it, within limits', async () => {
    const first = (await t.call('GET', `/agent/runs/${run.run_id}/history?limit=3`)).json();
    expect(first.entries.map((e: { revision: number }) => e.revision)).toEqual([0, 1, 2]);
    expect(first.page_info.has_next_page).toBe(true);
    const second = (
      await t.call('GET', `/agent/runs/${run.run_id}/history?limit=3&cursor=${first.page_info.next_cursor}`)
    ).json();
    expect(second.entries.map((e: { revision: number }) => e.revision)).toEqual([3, 4, 5]);
    const third = (
      await t.call('GET', `/agent/runs/${run.run_id}/history?limit=3&cursor=${second.page_info.next_cursor}`)
    ).json();
    expect(third).toMatchObject({ entries: [{ revision: 6 }], page_info: { has_next_page: false, next_cursor: null } });

    expectProblem(await t.call('GET', `/agent/runs/${run.run_id}/history?limit=0`), 400);
    expectProblem(await t.call('GET', `/agent/runs/${run.run_id}/history?limit=1001`), 400);
    expect((await t.call('GET', `/agent/runs/${run.run_id}/history?limit=1000`)).statusCode).toBe(200);
    expectProblem(await t.call('GET', `/agent/runs/${run.run_id}/history?cursor=garbage`), 400, 'invalid_cursor');
    const forged = Buffer.from(JSON.stringify({ s: 'revision:asc', v: ['x'] })).toString('base64url');
    expectProblem(await t.call('GET', `/agent/runs/${run.run_id}/history?cursor=${forged}`), 400, 'invalid_cursor');
    const taskCursor = (await t.call('GET', `/factory/${factoryUid}/tasks/${taskUid}/history?limit=1`)).json().page_info
      .next_cursor;
    expectProblem(await t.call('GET', `/agent/runs/${run.run_id}/history?cursor=${taskCursor}`), 400, 'invalid_cursor');
  });

  it('is 404 for runs the caller cannot view, and unknown runs', async () => {
    expectProblem(await t.call('GET', `/agent/runs/${run.run_id}/history`, undefined, outsider), 404);
    expect((await t.call('GET', `/agent/runs/${run.run_id}/history`, undefined, teammate)).statusCode).toBe(200);
    const personal = await newRun(t, { team: false });
    expectProblem(await t.call('GET', `/agent/runs/${personal.run_id}/history`, undefined, teammate), 404);
    expectProblem(await t.call('GET', '/agent/runs/nope/history'), 404);
    expectProblem(await t.call('GET', `/agent/runs/${run.run_id}/history`, undefined, null), 401);
  });
});

describe('GET /factory/{uid}/tasks/{task_uid}/history', () => {
  it('merges the task’s and its conversation’s events in log order', async () => {
    const res = await t.call('GET', `/factory/${factoryUid}/tasks/${taskUid}/history`);
    expect(res.statusCode, res.body).toBe(200);
    const { entries } = res.json();
    expect(entries.map((e: { stream: string; type: string }) => [e.stream, e.type])).toEqual([
      [`conversation-${run.conversation_id}`, 'ConversationRunAdded'],
      [`conversation-${run.conversation_id}`, 'ConversationTaskBound'],
      [`task-${taskUid}`, 'TaskCreated'],
    ]);
    expect(entries[2]).toMatchObject({
      revision: 0,
      actor: { type: 'user', uid: t.adminUid },
      data: { uid: taskUid, title: 'Fix it' },
    });

    const page = (await t.call('GET', `/factory/${factoryUid}/tasks/${taskUid}/history?limit=2`)).json();
    expect(page.entries).toHaveLength(2);
    const rest = (
      await t.call(
        'GET',
        `/factory/${factoryUid}/tasks/${taskUid}/history?limit=2&cursor=${page.page_info.next_cursor}`,
      )
    ).json();
    expect(rest.entries.map((e: { type: string }) => e.type)).toEqual(['TaskCreated']);
  });

  it('keeps a deleted task’s history', async () => {
    const other = await newRun(t);
    const uid = await newTask(other.conversation_id, other.run_id);
    await t.rt.execute(
      taskStream(uid),
      taskDecider,
      { type: 'DeleteTask', data: { uid, factory_uid: factoryUid } },
      adminContext(t),
    );
    const { entries } = (await t.call('GET', `/factory/${factoryUid}/tasks/${uid}/history`)).json();
    expect(entries.map((e: { type: string }) => e.type).at(-1)).toBe('TaskDeleted');
  });

  it('is 404 under another factory, for other teams and for unknown tasks', async () => {
    const otherFactory = (await t.call('POST', '/factory', { name: 'Elsewhere' })).json().uid;
    expectProblem(await t.call('GET', `/factory/${otherFactory}/tasks/${taskUid}/history`), 404);
    expectProblem(await t.call('GET', `/factory/${factoryUid}/tasks/${taskUid}/history`, undefined, outsider), 404);
    expect(
      (await t.call('GET', `/factory/${factoryUid}/tasks/${taskUid}/history`, undefined, teammate)).statusCode,
    ).toBe(200);
    expectProblem(await t.call('GET', `/factory/${factoryUid}/tasks/nope/history`), 404);
  });
});

describe('shopfloor history', () => {
  it('prints the same entries as the API, one JSON line each, or a table', async () => {
    const api = (await t.call('GET', `/agent/runs/${run.run_id}/history`)).json().entries;
    const lines = await runCli(['history', 'run', run.run_id], { dataDir: t.dir });
    expect(lines.code, lines.stderr).toBe(0);
    expect(
      lines.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(api);

    const task = await runCli(['history', 'task', taskUid, '--table'], { dataDir: t.dir });
    expect(task.code, task.stderr).toBe(0);
    expect(task.stdout).toContain('TaskCreated');
    expect(task.stdout).toContain('ConversationTaskBound');
    expect(task.stdout).toContain(`user:${t.adminUid}`);
  });

  it('exits 1 for an unknown task or run and 2 on a usage error', async () => {
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await history(t.rt, ['run', 'nope'])).toBe(1);
      expect(await history(t.rt, ['task', 'nope'])).toBe(1);
      expect(await history(t.rt, ['job', 'x'])).toBe(2);
      expect(await history(t.rt, ['run'])).toBe(2);
    } finally {
      quiet.mockRestore();
    }
  });
});
