// @vitest-environment node
/**
 * Issue #32: a run's event stream and a team's, against a real server process with a real
 * EventSource client (`eventsource`): live delivery once the read models apply an event (a GET
 * right after it sees the change), a run stream ending once its whole tree is terminal, resuming
 * with Last-Event-ID (or ?after=) after a dropped connection with and without writes in between
 * (nothing lost, nothing twice), comment lines on an idle stream, and bad requests refused.
 * Every payload is checked strictly against its type's schema in the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, removeDir, type ServerProcess, startServer, request, until } from '../server-process.js';
import { type Listener, listen, payloadChecker, type Received } from './stream-client.js';

let dataDir: string;
let server: ServerProcess;
let checkTeam: (e: Received) => void;
let checkRun: (e: Received) => void;
const RUN_TYPES = ['run.queued', 'run.in_progress', 'run.cancelled', 'run.succeeded', 'run.failed', 'run.errored'];

beforeAll(async () => {
  dataDir = makeDataDir();
  server = await startServer({ dataDir, extra: { STREAM_HEARTBEAT_SECONDS: '0.2' } });
  checkTeam = await payloadChecker(server, '/api/v1/events');
  checkRun = await payloadChecker(server, '/api/v1/agent/runs/{run_id}/events');
}, 60_000);

afterAll(async () => {
  await server?.stop();
  removeDir(dataDir);
});

const newRun = async (body: Record<string, unknown>) =>
  (await request(server, 'POST', '/agent/runs', { body })).body.run_id as string;
const cancel = (runId: string) => request(server, 'POST', `/agent/runs/${runId}/cancel`, { body: {} });
const opened = (s: Listener) => until('the stream opened', async () => s.source.readyState === 1);
const done = (s: Listener) => {
  s.close();
  expect(s.invalid).toEqual([]);
};

describe('the team stream', () => {
  it('sends a change once the read models show it, live only without an id', async () => {
    await newRun({ prompt: 'before the stream' });
    const stream = listen(server, '/events', RUN_TYPES, { check: checkTeam });
    await opened(stream);
    const runId = await newRun({ prompt: 'watch me', title: 'Watched' });
    const [queued] = await stream.count(1);
    expect(queued).toMatchObject({ type: 'run.queued', data: { run_id: runId, state: 'QUEUED', title: 'Watched' } });
    await cancel(runId);
    const [, cancelled] = await stream.count(2);
    expect(cancelled).toMatchObject({ type: 'run.cancelled', data: { run_id: runId, state: 'CANCELLED' } });
    // Sent after the read models applied it: a GET at once sees it.
    expect((await request(server, 'GET', `/agent/runs/${runId}`)).body.state).toBe('CANCELLED');
    expect(stream.events).toHaveLength(2);
    done(stream);
  });

  it('resumes after a dropped connection exactly after the last id, with and without writes between', async () => {
    const first = listen(server, '/events', RUN_TYPES, { check: checkTeam });
    await opened(first);
    const a = await newRun({ prompt: 'a' });
    const [seen] = await first.count(1);
    first.close();
    // Nothing written meanwhile: the resumed stream sends nothing old.
    const quiet = listen(server, '/events', RUN_TYPES, { headers: { 'last-event-id': seen!.id }, check: checkTeam });
    await opened(quiet);
    const b = await newRun({ prompt: 'b' });
    const [next] = await quiet.count(1);
    expect(next!.data.run_id).toBe(b);
    quiet.close();
    // Writes while away: each comes once, in order, then live ones.
    await cancel(a);
    await cancel(b);
    const resumed = listen(server, '/events', RUN_TYPES, { headers: { 'last-event-id': next!.id }, check: checkTeam });
    const got = await resumed.count(2);
    expect(got.map((e) => [e.type, e.data.run_id])).toEqual([
      ['run.cancelled', a],
      ['run.cancelled', b],
    ]);
    const c = await newRun({ prompt: 'c' });
    expect((await resumed.count(3))[2]!.data.run_id).toBe(c);
    // ?after= does the same for a client that cannot send the header.
    const byQuery = listen(server, `/events?after=${seen!.id}&types=run.cancelled`, RUN_TYPES, { check: checkTeam });
    expect((await byQuery.count(2)).map((e) => e.data.run_id)).toEqual([a, b]);
    done(resumed);
    done(byQuery);
    expect(a).not.toBe(b);
  });

  it('keeps an idle stream open with comment lines', async () => {
    const res = await fetch(`${server.baseUrl}/api/v1/events`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    while ((text.match(/: keep-alive/g) ?? []).length < 2)
      text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
  });

  it('refuses an id it never sent and a type it does not have, naming them', async () => {
    const badId = await request(server, 'GET', '/events', { headers: { 'last-event-id': 'not-an-id' } });
    expect(badId.status).toBe(400);
    expect(badId.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(badId.body.errors[0].path).toBe('headers.last-event-id');
    const badType = await request(server, 'GET', '/events?types=run.queued&types=run.exploded');
    expect(badType.status).toBe(400);
    expect(badType.body.errors[0].path).toBe('query.types.1');
    const runOnly = await request(server, 'GET', '/events?types=run.message');
    expect(runOnly.status).toBe(400);
    const unknownRun = await request(server, 'GET', '/agent/runs/no-such-run/events');
    expect(unknownRun.status).toBe(404);
  });
});

describe('the run stream', () => {
  it('replays the tree from the beginning, goes on live, and ends once every run of it is terminal', async () => {
    const root = await newRun({ prompt: 'root' });
    const child = await newRun({ prompt: 'child', parent_run_id: root });
    const other = await newRun({ prompt: 'not of the tree' });
    await cancel(root);
    const stream = listen(server, `/agent/runs/${root}/events`, RUN_TYPES, { check: checkRun });
    const replayed = await stream.count(3);
    expect(replayed.map((e) => [e.type, e.data.run_id])).toEqual([
      ['run.queued', root],
      ['run.queued', child],
      ['run.cancelled', root],
    ]);
    await cancel(other);
    await cancel(child);
    const all = await stream.count(4);
    expect(all[3]).toMatchObject({ type: 'run.cancelled', data: { run_id: child } });
    // The tree ended: the server closes the stream, and the client's reconnection gets a 204 that stops it.
    await until('the client stopped', async () => stream.source.readyState === 2);
    expect(stream.errors.at(-1)?.code).toBe(204);
    expect(stream.events.map((e) => e.data.run_id)).not.toContain(other);
    done(stream);
  });
});
