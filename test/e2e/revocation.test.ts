// @vitest-environment node
/**
 * Issue #30, item 4, across processes: two servers (`node src/main.ts`) on one data directory, the
 * first owning the projector, the second following its checkpoints. A claim long poll waiting in
 * one process hands out nothing once its key is revoked through the other: it answers 401 as soon
 * as its process learns of the revocation (the owner when it projects it, the follower at its next
 * look at the checkpoints, every 250 ms when idle), and a run queued after the revocation is never
 * leased to the revoked key, however soon after it comes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, ownerPid, removeDir, request, type ServerProcess, startServer, until } from './server-process.js';

let dataDir: string;
let owner: ServerProcess;
let follower: ServerProcess;

beforeAll(async () => {
  dataDir = makeDataDir();
  owner = await startServer({ dataDir });
  follower = await startServer({ dataDir });
}, 60_000);

afterAll(async () => {
  await follower?.stop();
  await owner?.stop();
  removeDir(dataDir);
});

/** One JSON request to `server`, as `key` (the admin's by default), acting for `team` when given. */
/** An agent with a key, in `team` (else a team of its own), and its worker announced through `through`. */
async function agentOf(through: ServerProcess, inTeam?: string) {
  const team =
    inTeam ?? ((await request(through, 'POST', '/teams', { body: { name: `Team ${Date.now()}` } })).body.uid as string);
  const agent = (await request(through, 'POST', '/agent/identities', { body: { name: 'Runner' }, team })).body
    .uid as string;
  const key = (await request(through, 'POST', `/agent/identities/${agent}/api-keys`, { team })).body;
  const worker = (await request(through, 'POST', '/agent/workers', { body: { host: 'box' }, key: key.api_key })).body
    .worker_id as string;
  return { team, agent, key: key.api_key as string, keyId: key.key_id as string, worker };
}

type Agent = Awaited<ReturnType<typeof agentOf>>;

/**
 * A claim long poll of `x`'s worker on `waiter`, once `waiter` has admitted it: its first sign of
 * life there is recorded in the worker's presence (announced through another process, so recorded
 * at once), which any process lists.
 */
async function waitingClaim(waiter: ServerProcess, x: Agent) {
  const listed = async () =>
    (await request(waiter, 'GET', '/agent/connected-self-hosted-workers', { team: x.team })).body.workers[0];
  const announced = await listed();
  const poll = request(waiter, 'POST', `/agent/workers/${x.worker}/claim?wait_seconds=30`, { key: x.key });
  await until(
    'the claim reaching its process',
    async () => (await listed()).last_heartbeat_at !== announced.connected_at,
  );
  return { poll };
}

const revoke = async (through: ServerProcess, x: Agent) =>
  expect(
    (await request(through, 'DELETE', `/agent/identities/${x.agent}/api-keys/${x.keyId}`, { team: x.team })).status,
  ).toBe(204);

describe.sequential('two processes on one data directory', () => {
  it('starts with the first owning the projector', async () => {
    expect(ownerPid(dataDir, 'projector')).toBe(owner.process.pid);
    for (const s of [owner, follower]) expect((await fetch(`${s.baseUrl}/readyz`)).status).toBe(200);
  });

  for (const [name, waiter, revoker] of [
    ['the follower, revoked through the owner', () => follower, () => owner],
    ['the owner, revoked through the follower', () => owner, () => follower],
  ] as const) {
    it(`a claim waiting on ${name}: a run queued right after is not leased to it`, async () => {
      const x = await agentOf(revoker());
      const { poll } = await waitingClaim(waiter(), x);
      await revoke(revoker(), x);
      const run = await request(revoker(), 'POST', '/agent/runs', {
        body: { prompt: 'after the revocation' },
        team: x.team,
      });
      expect(run.status).toBe(200);
      const answer = await poll;
      expect(answer.status, JSON.stringify(answer.body)).toBe(401);
      // Still queued, as both processes tell; a worker whose key works is handed it.
      for (const s of [owner, follower])
        expect((await request(s, 'GET', `/agent/runs/${run.body.run_id}`, { team: x.team })).body.state).toBe('QUEUED');
      const other = await agentOf(revoker(), x.team);
      const claimed = await request(waiter(), 'POST', `/agent/workers/${other.worker}/claim`, { key: other.key });
      expect(claimed.status).toBe(200);
      expect(claimed.body.run.run_id).toBe(run.body.run_id);
    });
  }

  it('a claim waiting on the follower ends with 401 once the follower learns of the revocation, nothing queued', async () => {
    const x = await agentOf(owner);
    const { poll } = await waitingClaim(follower, x);
    await revoke(owner, x);
    // Within the poll's 30 s, which would otherwise end in 204.
    expect((await poll).status).toBe(401);
  }, 45_000);
});
