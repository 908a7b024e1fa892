// @vitest-environment node
/**
 * Issue #32, the CLI as a real process against a real server: `shopfloor runs follow` prints the
 * run as it happens and exits with a code that tells how it ended (3: cancelled); `shopfloor events
 * tail` prints the team's activity, filtered by type, as JSON lines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, removeDir, runCli, type ServerProcess, startServer, request, until } from '../server-process.js';
import { listen } from './stream-client.js';

let dataDir: string;
let server: ServerProcess;

beforeAll(async () => {
  dataDir = makeDataDir();
  server = await startServer({ dataDir });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  removeDir(dataDir);
});

const client = () => ({
  dataDir,
  extra: { SHOPFLOOR_URL: server.baseUrl, SHOPFLOOR_API_KEY: server.apiKey! },
});
const newRun = async (prompt: string) =>
  (await request(server, 'POST', '/agent/runs', { body: { prompt, title: prompt } })).body.run_id as string;

describe('shopfloor runs follow', () => {
  it('prints the run until it ends and exits 3 for a cancelled run', async () => {
    const runId = await newRun('followed');
    const following = runCli(['runs', 'follow', runId], client(), 30_000);
    await request(server, 'POST', `/agent/runs/${runId}/cancel`, { body: {} });
    const done = await following;
    expect(done.code).toBe(3);
    const lines = done.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`run\\.queued\\s+${runId}\\s+QUEUED\\s+followed`));
    expect(lines.at(-1)).toMatch(/run\.cancelled\s+.*CANCELLED/);
    expect(done.stderr).toContain('ended: CANCELLED');
  }, 40_000);

  it('exits 5 for a run it may not read', async () => {
    const done = await runCli(['runs', 'follow', 'no-such-run', '--json'], client());
    expect(done.code).toBe(5);
    expect(done.stderr).toMatch(/cannot follow run no-such-run: 404/);
  });
});

describe('shopfloor events tail', () => {
  it('prints the team’s events of the types asked for, as JSON lines', async () => {
    const marker = listen(server, '/events', ['run.queued']);
    await until('open', async () => marker.source.readyState === 1);
    const first = await newRun('first');
    const [seen] = await marker.count(1);
    marker.close();
    const second = await newRun('second');
    await request(server, 'POST', `/agent/runs/${first}/cancel`, { body: {} });
    const tail = await runCli(
      ['events', 'tail', '--types', 'run.cancelled', '--after', seen!.id, '--json'],
      client(),
      6000,
    );
    const printed = tail.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(printed.map((e) => [e.type, e.data.run_id])).toEqual([['run.cancelled', first]]);
    expect(second).not.toBe(first);
  });
});
