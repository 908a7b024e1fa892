// @vitest-environment node
/**
 * Issue #32 across processes: two servers on one data directory (the first owns the projector,
 * the second follows its checkpoints). A stream on either sees writes made through the other (it
 * reads the store's log, not this process's appends); a client resumes with its last id on the
 * other process, and on a process restarted, losing nothing and receiving nothing twice. A server
 * shutting down ends its streams with a `retry:` hint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, removeDir, type ServerProcess, startServer, request, until } from '../server-process.js';
import { listen, payloadChecker, type Received } from './stream-client.js';

let dataDir: string;
let owner: ServerProcess;
let follower: ServerProcess;
let check: (e: Received) => void;
const TYPES = ['run.queued', 'run.cancelled'];

beforeAll(async () => {
  dataDir = makeDataDir();
  owner = await startServer({ dataDir });
  follower = await startServer({ dataDir });
  check = await payloadChecker(owner, '/api/v1/events');
}, 60_000);

afterAll(async () => {
  await follower?.stop();
  await owner?.stop();
  removeDir(dataDir);
});

const newRun = async (through: ServerProcess, prompt: string) =>
  (await request(through, 'POST', '/agent/runs', { body: { prompt } })).body.run_id as string;

describe('two processes of one store', () => {
  it('a stream on the follower sees the owner’s writes; the client resumes on the owner', async () => {
    const onFollower = listen(follower, '/events', TYPES, { check });
    await until('open', async () => onFollower.source.readyState === 1);
    const a = await newRun(owner, 'through the owner');
    const [first] = await onFollower.count(1);
    expect(first!.data.run_id).toBe(a);
    onFollower.close();
    const b = await newRun(follower, 'through the follower');
    const c = await newRun(owner, 'through the owner again');
    const onOwner = listen(owner, '/events', TYPES, { headers: { 'last-event-id': first!.id }, check });
    const got = await onOwner.count(2);
    expect(got.map((e) => e.data.run_id)).toEqual([b, c]);
    onOwner.close();
    expect([...onFollower.invalid, ...onOwner.invalid]).toEqual([]);
  });

  it('a shutdown ends streams with a retry hint; the client resumes on the process restarted', async () => {
    const res = await fetch(`${owner.baseUrl}/api/v1/events`, { headers: { authorization: `Bearer ${owner.apiKey}` } });
    const body = res.text();
    const last = listen(follower, '/events', TYPES, { check });
    await until('open', async () => last.source.readyState === 1);
    const before = await newRun(follower, 'before the restart');
    const [seen] = await last.count(1);
    last.close();
    await owner.stop();
    expect(await body).toMatch(/\nretry: \d+\n\n$/);
    const during = await newRun(follower, 'while the owner is down');
    owner = await startServer({ dataDir });
    const after = await newRun(owner, 'after the restart');
    const resumed = listen(owner, '/events', TYPES, { headers: { 'last-event-id': seen!.id }, check });
    const got = await resumed.count(2);
    expect(got.map((e) => e.data.run_id)).toEqual([during, after]);
    expect(seen!.data.run_id).toBe(before);
    resumed.close();
    expect(resumed.invalid).toEqual([]);
  }, 60_000);
});
