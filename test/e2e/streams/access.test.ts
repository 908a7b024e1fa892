// @vitest-environment node
/**
 * Issue #32, who sees what, against a real server process with a real EventSource client: a
 * second team's stream sees none of the first's events while the first's own streams, open beside
 * it, do; a member, an agent and a personal run's creator each see what the API lets them read (the
 * run's one read check); removing the member or revoking the key ends the stream (and the client's
 * reconnection is refused); the per-key bound answers 429; a client that stops reading is closed.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, removeDir, type ServerProcess, startServer, request, until } from '../server-process.js';
import { type Listener, listen, payloadChecker, type Received } from './stream-client.js';

let dataDir: string;
let server: ServerProcess;
let check: (e: Received) => void;
let teamA: string;
let teamB: string;
const TYPES = ['run.queued', 'run.cancelled'];

beforeAll(async () => {
  dataDir = makeDataDir();
  server = await startServer({
    dataDir,
    logLevel: 'info',
    extra: { STREAM_MAX_PER_KEY: '3', STREAM_BUFFER_BYTES: '4096', STREAM_REPLAY_MAX_EVENTS: '3' },
  });
  check = await payloadChecker(server, '/api/v1/events');
  teamA = (await request(server, 'GET', '/teams')).body.teams[0].uid;
  teamB = (await request(server, 'POST', '/teams', { body: { name: 'Team B' } })).body.uid;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  removeDir(dataDir);
});

async function member(team: string, email: string) {
  const added = await request(server, 'POST', `/teams/${team}/members`, { body: { email } });
  const redeemed = await request(server, 'POST', '/invitations/redeem', { body: { code: added.body.invitation_code } });
  return { uid: added.body.user.uid as string, key: redeemed.body.api_key as string };
}

async function agent(team: string) {
  const uid = (await request(server, 'POST', '/agent/identities', { body: { name: 'Runner' }, team })).body.uid;
  return (await request(server, 'POST', `/agent/identities/${uid}/api-keys`, { team })).body.api_key as string;
}

const runIn = async (body: Record<string, unknown>, team?: string) =>
  (await request(server, 'POST', '/agent/runs', { body, team })).body.run_id as string;

const opened = async (...streams: Listener[]) => {
  for (const s of streams) await until('the stream opened', async () => s.source.readyState === 1);
};
const runIds = (s: Listener) => s.events.map((e) => e.data.run_id);

describe('isolation and read permission', () => {
  it('each stream sends what its caller may list in its team, and nothing of another team', async () => {
    const amy = await member(teamA, 'amy@example.com');
    const bob = await member(teamB, 'bob@example.com');
    const agentA = await agent(teamA);
    const admin = listen(server, '/events', TYPES, { check });
    const adminInB = listen(server, `/events?team_uid=${teamB}`, TYPES, { check });
    const amyA = listen(server, '/events', TYPES, { key: amy.key, check });
    const bobB = listen(server, '/events', TYPES, { key: bob.key, check });
    const agentStream = listen(server, '/events', TYPES, { key: agentA, check });
    await opened(admin, adminInB, amyA, bobB, agentStream);

    const shared = await runIn({ prompt: 'team A' });
    const personal = await runIn({ prompt: 'mine alone', team: false });
    const ofB = await runIn({ prompt: 'team B' }, teamB);
    await until(
      'the last run reached every stream that may read it',
      async () =>
        [admin, amyA, agentStream].every((s) => s.events.length >= 1) &&
        adminInB.events.length >= 1 &&
        bobB.events.length >= 1,
    );
    await admin.count(2);
    await agentStream.count(2);
    // Team B's run came last: every earlier event has been sent (or not) by the time it arrives.
    await until('B', async () => runIds(bobB).includes(ofB) && runIds(adminInB).includes(ofB));
    expect(runIds(admin)).toEqual([shared, personal]);
    expect(runIds(agentStream)).toEqual([shared, personal]); // it executes the team's personal runs
    // The caller's personal runs are listed in whichever team it acts for, as GET /agent/runs lists them.
    expect(runIds(adminInB)).toEqual([personal, ofB]);
    const listedInB = (await request(server, 'GET', '/agent/runs', { team: teamB })).body.runs.map(
      (r: Received['data']) => r.run_id,
    );
    expect(listedInB.sort()).toEqual([personal, ofB].sort());
    expect(runIds(bobB)).toEqual([ofB]);
    await until('amy saw the shared run', async () => runIds(amyA).includes(shared));
    // Amy's stream, open beside the others, sees the team's run and not the admin's personal one.
    const lastA = await runIn({ prompt: 'team A, last' });
    await until('amy saw the last run', async () => runIds(amyA).includes(lastA));
    expect(runIds(amyA)).toEqual([shared, lastA]);
    // As the API: amy may not read the personal run, the agent may.
    expect((await request(server, 'GET', `/agent/runs/${personal}`, { key: amy.key })).status).toBe(404);
    expect((await request(server, 'GET', `/agent/runs/${personal}`, { key: agentA })).status).toBe(200);
    const amyRun = await request(server, 'GET', `/agent/runs/${personal}/events`, { key: amy.key });
    expect(amyRun.status).toBe(404);
    for (const s of [admin, adminInB, amyA, bobB, agentStream]) {
      s.close();
      expect(s.invalid).toEqual([]);
    }
  });
});

describe('the console', () => {
  it('streams with its session cookie, naming the team in the query', async () => {
    const signIn = await fetch(`${server.baseUrl}/api/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-shopfloor-console': '1', origin: server.baseUrl },
      body: JSON.stringify({ api_key: server.apiKey }),
    });
    expect(signIn.status).toBe(201);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const inB = listen(server, `/events?team_uid=${teamB}`, TYPES, { cookie, check });
    await opened(inB);
    const ofB = await runIn({ prompt: 'seen by the console' }, teamB);
    const ofA = await runIn({ prompt: 'not in team B' });
    const last = await runIn({ prompt: 'last in team B' }, teamB);
    await until('the console saw the last run', async () => runIds(inB).includes(last));
    expect(runIds(inB)).toEqual([ofB, last]);
    expect(ofA).not.toBe(ofB);
    inB.close();
    expect(inB.invalid).toEqual([]);
  });
});

describe('revocation and bounds', () => {
  it('removing the member, or revoking the key, ends the stream; the reconnection is refused', async () => {
    const cid = await member(teamA, 'cid@example.com');
    const dee = await member(teamA, 'dee@example.com');
    // Dee streams with a second key, and revokes it with the first (the last working key stays).
    const second = (await request(server, 'POST', '/me/api-keys', { body: { label: 'stream' }, key: dee.key })).body;
    const cidStream = listen(server, '/events', TYPES, { key: cid.key });
    const deeStream = listen(server, '/events', TYPES, { key: second.api_key });
    await opened(cidStream, deeStream);
    expect((await request(server, 'DELETE', `/teams/${teamA}/members/${cid.uid}`)).status).toBe(204);
    await until('cid’s client gave up', async () => cidStream.source.readyState === 2);
    expect(cidStream.errors.map((e) => e.code)).toContain(403);
    expect((await request(server, 'DELETE', `/me/api-keys/${second.key_id}`, { key: dee.key })).status).toBe(204);
    await until('dee’s client gave up', async () => deeStream.source.readyState === 2);
    expect(deeStream.errors.map((e) => e.code)).toContain(401);
  });

  it('answers 429 past the streams a key may hold, and admits one again once another closes', async () => {
    const key = await agent(teamA);
    const streams = [1, 2, 3].map(() => listen(server, '/events', TYPES, { key }));
    await opened(...streams);
    const refused = await request(server, 'GET', '/events', { key });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(refused.body.code).toBe('too_many_streams');
    streams[0]!.close();
    const again = listen(server, '/events', TYPES, { key });
    await opened(again);
    for (const s of [...streams, again]) s.close();
  });

  it('replays at most the bound in one go; the client comes back for the rest, nothing lost or twice', async () => {
    const marker = listen(server, '/events', TYPES);
    await opened(marker);
    await runIn({ prompt: 'marker' });
    const [seen] = await marker.count(1);
    marker.close();
    const backlog = [];
    for (let i = 0; i < 7; i++) backlog.push(await runIn({ prompt: `backlog ${i}` }));
    const resumed = listen(server, `/events?after=${seen!.id}`, TYPES, { check });
    await resumed.count(7);
    expect(runIds(resumed)).toEqual(backlog);
    // Three connections: 3 + 3 + 1, each ended with `retry: 0` past the bound.
    expect(resumed.errors.length).toBeGreaterThanOrEqual(2);
    resumed.close();
    expect(resumed.invalid).toEqual([]);
  });

  it('closes the stream of a client that stops reading, once its buffer passes the bound', async () => {
    const key = await agent(teamA);
    const socket = net.connect(Number(new URL(server.baseUrl).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`GET /api/v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    // Reads nothing. On loopback the kernel takes megabytes first; what passes the (lowered) bound here
    // is what the server holds for the stream: a flush of several events larger than 4 KiB.
    socket.pause();
    let closed = false;
    const title = 'x'.repeat(200);
    for (let i = 0; i < 200 && !closed; i++) {
      await Promise.all(Array.from({ length: 20 }, () => runIn({ prompt: 'fill', title })));
      closed = /reads too slowly/.test(server.stdout());
    }
    expect(closed).toBe(true);
    // The client, reading again, gets what was sent before the close and then the end.
    socket.resume();
    await new Promise((resolve) => socket.once('end', resolve));
  }, 120_000);
});
