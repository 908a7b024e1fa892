/**
 * A reaction that throws for the same event every time (issue #36): a TaskCancelled whose run id
 * came as a list, appended straight to the log, on which the task-cancel reactor's query of the
 * runs throws. In the real app on real SQLite files, with the real CLI in its own process.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { v4 as uuidv4 } from 'uuid';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { taskStream } from '../../commands/task/events.js';
import { runsProjection } from '../../projections/run/runs.js';
import { metadataOf } from '../../src/kernel/handle.js';
import { runCli } from '../e2e/server-process.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { sample, scrape } from '../helpers/prometheus.js';
import { adminContext, newRun } from '../helpers/conversation-fixtures.js';
import { newFactory } from '../helpers/task-fixtures.js';

let t: TestApp;
let factory: string;
beforeEach(async () => {
  // Three tries, 10 ms apart then 20: the test waits on the set-aside record, not on the pauses.
  t = await startTestApp({ REACTOR_ATTEMPTS: '3', REACTOR_RETRY_SECONDS: '0.01' });
  factory = await newFactory(t);
});
afterEach(() => t.close());

const runState = async (runId: string) => (await t.rt.readModel(runsProjection).get(runId))?.state;
const setAside = async () => (await t.rt.docs.listSetAside('reactor_task-cancel')).map((e) => e.event_type);

/** A root run with a queued child, and the task of its conversation. */
async function tree() {
  const root = await newRun(t);
  const child = await newRun(t, { parent_run_id: root.run_id });
  const res = await t.call('POST', `/factory/${factory}/tasks`, {
    title: 'A tree',
    conversation_id: root.conversation_id,
  });
  expect(res.statusCode, res.body).toBe(201);
  return { root: root.run_id, child: child.run_id, task: res.json().uid as string };
}

describe('a reaction that throws for the same event every time', () => {
  it('is set aside after its tries: the reactor goes on, readiness, status and verify name it, and a retry after the fix runs it once', async () => {
    const poisoned = await tree();
    const data = { uid: poisoned.task, from: 'TRIAGE', run_id: [poisoned.root] };
    const { position } = await t.rt.events.append(
      taskStream(poisoned.task),
      [{ id: uuidv4(), type: 'TaskCancelled', data, metadata: metadataOf(adminContext(t)) }],
      'any',
    );
    await expect.poll(setAside, { timeout: 10_000 }).toEqual(['TaskCancelled']);

    // Not stalled: a later cancellation is reacted to.
    const later = await tree();
    expect((await t.call('POST', `/factory/${factory}/tasks/${later.task}/cancel`)).statusCode).toBe(200);
    await expect.poll(() => runState(later.child)).toBe('CANCELLED');
    expect(await runState(poisoned.child)).toBe('QUEUED');

    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode, ready.body).toBe(200);
    expect(ready.json().reactors.set_aside).toEqual([{ reactor: 'task-cancel', events: 1 }]);
    const metrics = await scrape(t.app);
    expect(sample(metrics, 'shopfloor_reactor_set_aside_events', { reactor: 'task-cancel' })).toBe(1);
    const env = { dataDir: t.dir };
    const status = await runCli(['projections', 'status'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^reactor task-cancel +position \d+ .* set aside 1 {2}owner /m);
    expect(status.stdout).toContain('reactor task-cancel: 1 event(s) set aside, its reaction failed every try:');
    expect(status.stdout).toContain(`position ${position.commit}  task-${poisoned.task}@`);
    expect(status.stdout).toContain('an array is not a condition');
    const verified = await runCli(['projections', 'verify'], env);
    expect(verified.code, verified.stdout + verified.stderr).toBe(1);
    expect(verified.stdout).toContain('reactor task-cancel: 1 event(s) set aside');

    // The fix, for this test: the event's run id patched to the one it should have been.
    const db = new Database(path.join(t.dir, 'events.db'));
    db.prepare('UPDATE events SET data = ? WHERE position = ?').run(
      JSON.stringify({ ...data, run_id: poisoned.root }),
      Number(position.commit),
    );
    db.close();
    // Retried by the CLI while the server runs: the reaction once, not a rebuild.
    const retried = await runCli(['projections', 'retry', 'task-cancel'], env);
    expect(retried.code, retried.stdout + retried.stderr).toBe(0);
    expect(retried.stdout).toMatch(/^reactor task-cancel: 1 event\(s\) were set aside; 0 still are$/m);
    await expect.poll(() => runState(poisoned.child)).toBe('CANCELLED');
    const cancelled = (await t.rt.events.readStream(`run-${poisoned.child}`)).filter((e) => e.type === 'RunCancelled');
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]!.metadata.reaction).toEqual({
      reactor: 'task-cancel',
      commit: position.commit.toString(),
      prepare: position.prepare.toString(),
    });
    expect(await setAside()).toEqual([]);
    expect((await t.app.inject({ url: '/readyz' })).json().reactors.set_aside).toEqual([]);
    expect((await runCli(['projections', 'retry'], env)).stdout).toContain('No events are set aside.');
  }, 120_000);
});
