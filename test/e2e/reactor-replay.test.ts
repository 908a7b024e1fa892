// @vitest-environment node
/**
 * A reactor's replay on a fresh read store (issue #34): a real server is killed with SIGKILL
 * between a dispatched run's RunCreated and the task the dispatched-task reactor makes of it (the
 * reactor kept from reacting: this test process holds its lease). The read store is then thrown
 * away. The next server's reactor starts at the cause of its last recorded effect, not at the
 * start of the log, and still makes the missing task, exactly once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { Ownership } from '../../src/projector/ownership.js';
import { openSqliteDocumentStore } from '../../src/readstore/sqlite.js';
import { call, makeDataDir, readEvents, removeDir, type ServerProcess, startServer } from './server-process.js';

const dataDir = makeDataDir();
const servers: ServerProcess[] = [];
const start = async (logLevel = 'warn') => {
  // A killed process's leases are taken over after one second.
  const s = await startServer({ dataDir, logLevel, extra: { OWNERSHIP_LEASE_SECONDS: '1' } });
  servers.push(s);
  return s;
};

afterAll(async () => {
  await Promise.all(servers.map((s) => s.kill('SIGKILL')));
  removeDir(dataDir);
});

/** Takes the dispatched-task reactor's lease in this process and holds it until released. */
async function holdReactorLease() {
  const docs = openSqliteDocumentStore(path.join(dataDir, 'read.db'));
  const ownership = new Ownership(docs, pino({ level: 'silent' }), 1000);
  await ownership.start();
  const held = ownership.exclusive(
    'reactor_dispatched-task',
    ({ signal }) => new Promise<void>((r) => signal.addEventListener('abort', () => r())),
  );
  await expect.poll(() => held.owned, { timeout: 10_000 }).toBe(true);
  return async () => {
    await held.stop();
    await docs.close();
  };
}

const tasksOf = async (server: ServerProcess, factory: string) =>
  ((await call(server, 'GET', `/factory/${factory}/tasks`)).body as { tasks: Array<{ title: string }> }).tasks;

describe('a reactor killed between an event and its effect, on a fresh read store', () => {
  it('does the effect once, starting at the cause of its last recorded effect', { timeout: 90_000 }, async () => {
    let server = await start();
    const factory = String((await call(server, 'POST', '/factory', { name: 'Payments' })).body!.uid);
    const foreman = { name: 'Foreman', agent_type: 'FOREMAN', factory_uid: factory };
    expect((await call(server, 'POST', '/agent/identities', foreman)).status).toBe(201);
    const dispatch = (title: string) => call(server, 'POST', `/factory/${factory}/runs`, { prompt: title, title });
    expect((await dispatch('First')).status).toBe(201);
    await expect.poll(async () => (await tasksOf(server, factory)).map((t) => t.title)).toEqual(['First']);
    await server.kill('SIGKILL');

    // The next server cannot react: this process holds the reactor's lease. Its RunCreated is
    // acknowledged, and the server dies before anything makes its task.
    const release = await holdReactorLease();
    server = await start();
    expect((await dispatch('Second')).status).toBe(201);
    await server.kill('SIGKILL');
    await release();

    // A fresh read store: no checkpoint, no lease; the log alone says how far the reactor came.
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(path.join(dataDir, `read.db${suffix}`), { force: true });
    server = await start('info');
    await expect
      .poll(async () => (await tasksOf(server, factory)).map((t) => t.title).sort(), { timeout: 30_000 })
      .toEqual(['First', 'Second']);

    const created = readEvents(dataDir, { prefix: 'run-' }).filter((e) => e.type === 'RunCreated');
    const tasks = readEvents(dataDir, { prefix: 'task-' }).filter((e) => e.type === 'TaskCreated');
    expect(tasks.map((t) => t.data.run_id)).toEqual(created.map((r) => r.data.run_id));
    const first = created[0]!.position;
    expect(server.stdout()).toMatch(
      new RegExp(
        `"reactor":"dispatched-task","after":"${first - 1}".*reactor starts at the cause of its last recorded effect`,
      ),
    );
  });
});
