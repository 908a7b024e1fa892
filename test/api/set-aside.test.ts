/**
 * An event already in the log that a read model cannot apply (issue #17): a RunCreated whose
 * config nests 1,001 arrays deep, which the SQLite read store's JSONB refuses. Appended straight
 * to the event store, past every bound at the HTTP edge, in the real app on real SQLite files.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { v4 as uuidv4 } from 'uuid';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRun } from '../../commands/run/create.js';
import { runStream } from '../../commands/run/events.js';
import { runRequestSchema } from '../../commands/run/schema.js';
import { ReadModelFailed } from '../../src/kernel/errors.js';
import { runsProjection } from '../../projections/run/runs.js';
import { runCli, parseStatus } from '../e2e/server-process.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { adminContext, newRun } from '../helpers/conversation-fixtures.js';

const nested = (depth: number): unknown => {
  let v: unknown = [];
  for (let i = 1; i < depth; i++) v = [v];
  return v;
};

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(() => t.close());

/** Appends, bypassing HTTP, a copy of a real run's RunCreated whose config the read store refuses. */
async function appendPoison() {
  const template = (await t.rt.events.readStream(runStream((await newRun(t)).run_id)))[0]!;
  const run_id = uuidv4();
  const data = {
    ...(template.data as Record<string, unknown>),
    run_id,
    root_run_id: run_id,
    conversation_id: uuidv4(),
    config: { x: nested(1001) },
  };
  const { position } = await t.rt.events.append(
    runStream(run_id),
    [{ id: uuidv4(), type: 'RunCreated', data, metadata: template.metadata }],
    'no_stream',
  );
  return { run_id, position };
}

describe('an event a read model cannot apply', () => {
  it('is set aside: every team goes on, the server stays ready, /readyz and the CLI name it, and a retry after the fix applies it', async () => {
    const other = await t.call('POST', '/teams', { name: 'Elsewhere' });
    expect(other.statusCode, other.body).toBe(201);
    const { run_id, position } = await appendPoison();
    await t.rt.projector.waitFor(position);

    // Commands of this team and of another answer as usual, not 503 after 10 s.
    const started = performance.now();
    const factory = await t.call('POST', '/factory', { name: 'Still here' }, undefined, {
      'x-service-team-uid': other.json().uid,
    });
    expect(factory.statusCode, factory.body).toBe(201);
    const run = await t.call('POST', '/agent/runs', { prompt: 'carry on' });
    expect(run.statusCode, run.body).toBe(200);
    expect(performance.now() - started).toBeLessThan(5000);
    expect((await t.call('GET', `/agent/runs/${run.json().run_id}`)).statusCode).toBe(200);
    expect((await t.call('GET', `/agent/runs/${run_id}`)).statusCode).toBe(404);

    // Still in service: the process serves every read model, and readiness names what was set aside.
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode, ready.body).toBe(200);
    expect(ready.json().set_aside).toEqual([{ projection: 'runs', version: runsProjection.version, events: 1 }]);

    const env = { dataDir: t.dir };
    const verified = await runCli(['projections', 'verify'], env);
    expect(verified.code, verified.stdout + verified.stderr).toBe(1);
    expect(verified.stdout).toMatch(/^runs: 1 event\(s\) set aside/m);
    expect(verified.stdout).toMatch(/^factories: ok$/m);
    const status = await runCli(['projections', 'status'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(parseStatus(status.stdout).find((r) => r.projection === 'runs')).toMatchObject({ set_aside: '1' });
    expect(status.stdout).toContain(`position ${position.commit}  run-${run_id}@0  RunCreated`);
    expect(status.stdout).toContain('SqliteError: malformed JSON');

    // The fix, for this test: the event's config patched to one the store can hold.
    const db = new Database(path.join(t.dir, 'events.db'));
    const row = db.prepare('SELECT data FROM events WHERE position = ?').get(Number(position.commit)) as {
      data: string;
    };
    db.prepare('UPDATE events SET data = ? WHERE position = ?').run(
      JSON.stringify({ ...JSON.parse(row.data), config: { x: 'fixed' } }),
      Number(position.commit),
    );
    db.close();

    // Retried while the server runs; the server follows on the rebuilt read model.
    const retried = await runCli(['projections', 'retry'], env);
    expect(retried.code, retried.stdout + retried.stderr).toBe(0);
    expect(retried.stdout).toMatch(/^runs: 1 event\(s\) were set aside; 0 still are$/m);
    expect((await t.app.inject({ url: '/readyz' })).json()).toMatchObject({ status: 'ready', set_aside: [] });
    expect((await t.call('GET', `/agent/runs/${run_id}`)).json()).toMatchObject({ agent_config: { x: 'fixed' } });
    expect((await t.call('POST', '/agent/runs', { prompt: 'after the retry' })).statusCode).toBe(200);
    const reverified = await runCli(['projections', 'verify'], env);
    expect(reverified.code, reverified.stdout + reverified.stderr).toBe(0);
    expect(await t.rt.docs.listSetAside()).toEqual([]);
  }, 120_000);

  it('answers the command that made it at once: the change was saved, a read model could not apply it', async () => {
    const request = { ...runRequestSchema.parse({ prompt: 'too deep' }), config: { x: nested(1001) } };
    const started = performance.now();
    const created = createRun(t.rt, request as never, adminContext(t), { source: 'API', team_uid: t.teamUid });
    await expect(created).rejects.toBeInstanceOf(ReadModelFailed);
    await expect(created).rejects.toMatchObject({ status: 500, code: 'read_model_failed', retryable: false });
    expect(performance.now() - started).toBeLessThan(5000);
    // Saved, all the same: the run's events are in the log.
    const [setAside] = await t.rt.docs.listSetAside();
    expect(setAside).toMatchObject({ event_type: 'RunCreated', metadata: { actor: { uid: t.adminUid } } });
    expect(await t.rt.events.readStream(setAside!.stream)).toHaveLength(1);
  });
});
