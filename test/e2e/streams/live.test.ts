// @vitest-environment node
/**
 * Issue #32: a run's event stream and a team's, against a real server process with a real
 * EventSource client: live delivery after the read models apply an event (a GET right after it
 * sees the change), the run stream ending once its tree is terminal, and resuming with
 * Last-Event-ID after a dropped connection, with and without writes in between: nothing lost,
 * nothing twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, removeDir, type ServerProcess, startServer } from '../server-process.js';
import { call, listen, until } from './stream-client.js';

let dataDir: string;
let server: ServerProcess;
const RUN_TYPES = ['run.queued', 'run.in_progress', 'run.cancelled', 'run.succeeded', 'run.failed', 'run.errored'];

beforeAll(async () => {
  dataDir = makeDataDir();
  server = await startServer({ dataDir });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  removeDir(dataDir);
});

const newRun = async (prompt: string) =>
  (await call(server, 'POST', '/agent/runs', { body: { prompt } })).body.run_id as string;

describe('the team stream', () => {
  it('sends a run state change once the read models show it', async () => {
    const stream = listen(server, '/events', RUN_TYPES);
    await until('the stream opened', async () => stream.source.readyState === 1);
    const runId = await newRun('watch me');
    const [queued] = await stream.count(1);
    expect(queued).toMatchObject({ type: 'run.queued', data: { run_id: runId, state: 'QUEUED' } });
    await call(server, 'POST', `/agent/runs/${runId}/cancel`, { body: {} });
    const [, cancelled] = await stream.count(2);
    expect(cancelled).toMatchObject({ type: 'run.cancelled', data: { run_id: runId, state: 'CANCELLED' } });
    expect((await call(server, 'GET', `/agent/runs/${runId}`)).body.state).toBe('CANCELLED');
    stream.close();
  });
});

describe('the run stream', () => {
  it('replays the run from the beginning and ends once it is terminal', async () => {
    const runId = await newRun('short');
    await call(server, 'POST', `/agent/runs/${runId}/cancel`, { body: {} });
    const stream = listen(server, `/agent/runs/${runId}/events`, RUN_TYPES);
    const got = await stream.count(2);
    expect(got.map((e) => e.type)).toEqual(['run.queued', 'run.cancelled']);
    stream.close();
  });
});
